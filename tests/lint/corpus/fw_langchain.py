"""PT001: LangChain chat-model invoke / ainvoke in a handler, and an agent made without Restate's middleware;
the same agent with RestateMiddleware, or the model call inside ctx.run_typed, is not."""

import restate
from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_anthropic import ChatAnthropic
from langchain_openai import ChatOpenAI
from restate.ext.langchain import RestateMiddleware

chat = restate.Service("Chat")

model = ChatOpenAI(model="gpt-4o-mini")
claude = init_chat_model("anthropic:claude-sonnet-4-5")
with_tools = claude.bind_tools([])

plain_agent = create_agent(model, tools=[])
durable_agent = create_agent(model, tools=[], middleware=[RestateMiddleware()])


@chat.handler()
async def reply(ctx: restate.Context, question: str) -> str:
    answer = await model.ainvoke(question)  # expect: PT001
    second = with_tools.invoke(question)  # expect: PT001
    return str(answer.content) + str(second.content)


@chat.handler()
async def reply_local(ctx: restate.Context, question: str) -> str:
    local = ChatAnthropic(model="claude-haiku-4-5").bind_tools([])
    return str((await local.ainvoke(question)).content)  # expect: PT001


@chat.handler()
async def run_plain_agent(ctx: restate.Context, question: str) -> str:
    state = await plain_agent.ainvoke({"messages": [{"role": "user", "content": question}]})  # expect: PT001
    return str(state["messages"][-1].content)


@chat.handler()
async def run_durable_agent(ctx: restate.Context, question: str) -> str:
    state = await durable_agent.ainvoke({"messages": [{"role": "user", "content": question}]})
    return str(state["messages"][-1].content)


@chat.handler()
async def run_local_durable_agent(ctx: restate.Context, question: str) -> str:
    middleware = RestateMiddleware()
    agent = create_agent(model, tools=[], middleware=[middleware])
    state = await agent.ainvoke({"messages": [{"role": "user", "content": question}]})
    return str(state["messages"][-1].content)


async def ask(question: str) -> str:
    return str((await model.ainvoke(question)).content)


@chat.handler()
async def reply_journaled(ctx: restate.Context, question: str) -> str:
    return await ctx.run_typed("model", ask, question=question)
