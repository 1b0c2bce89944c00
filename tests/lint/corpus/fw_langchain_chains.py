"""PT001: a LangChain chain with a chat model in it (`prompt | model | parser`), a LangGraph prebuilt agent,
and a chat model made by a factory function (cached or not); the same calls inside ctx.run_typed are not."""

import functools

import restate
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent

chains = restate.Service("Chains")

llm = ChatOpenAI(model="gpt-4o-mini", temperature=0)
prompt = ChatPromptTemplate.from_messages([("system", "Be brief."), ("user", "{question}")])
chain = prompt | llm | StrOutputParser()
graph = create_react_agent(llm, tools=[])
formatting = prompt | StrOutputParser.parse  # no chat model in it: formatting only


@functools.cache
def get_model() -> ChatOpenAI:
    return ChatOpenAI(model="gpt-4o")


def make_chain():  # type: ignore[no-untyped-def]
    return prompt | get_model()


@chains.handler()
async def answer(ctx: restate.Context, question: str) -> str:
    return await chain.ainvoke({"question": question})  # expect: PT001


@chains.handler()
async def answer_inline(ctx: restate.Context, question: str) -> str:
    reply = await (prompt | llm).ainvoke({"question": question})  # expect: PT001
    return str(reply.content)


@chains.handler()
async def answer_local(ctx: restate.Context, question: str) -> str:
    local = prompt | llm.bind_tools([])
    reply = local.invoke({"question": question})  # expect: PT001
    return str(reply.content)


@chains.handler()
async def react(ctx: restate.Context, question: str) -> str:
    state = await graph.ainvoke({"messages": [("user", question)]})  # expect: PT001
    return str(state["messages"][-1].content)


@chains.handler()
async def from_factory(ctx: restate.Context, question: str) -> str:
    reply = await get_model().ainvoke(question)  # expect: PT001
    return str(reply.content)


@chains.handler()
async def from_chain_factory(ctx: restate.Context, question: str) -> str:
    built = make_chain()
    reply = await built.ainvoke({"question": question})  # expect: PT001
    return str(reply.content)


@chains.handler()
async def format_only(ctx: restate.Context, question: str) -> str:
    return str(formatting.invoke({"question": question}))


async def ask(question: str) -> str:
    return await chain.ainvoke({"question": question})


@chains.handler()
async def answer_journaled(ctx: restate.Context, question: str) -> str:
    return await ctx.run_typed("chain", ask, question=question)
