"""Methods: self.client = AsyncOpenAI() in __init__, a module-level instance `bot`, and self-calls."""

import httpx
import restate
from openai import AsyncOpenAI
from restate import Context

support = restate.Service("Support")


class Bot:
    def __init__(self, model: str) -> None:
        self.model = model
        self.client = AsyncOpenAI()
        self.http = httpx.AsyncClient(base_url="https://kb.example.com")

    async def ask(self, question: str) -> str:
        messages = [{"role": "user", "content": question}]
        out = await self.client.chat.completions.create(model=self.model, messages=messages)
        return out.choices[0].message.content or ""

    async def _search(self, query: str) -> list[str]:
        resp = await self.http.get("/search", params={"q": query})
        return resp.json()["articles"]

    async def answer_with_kb(self, question: str) -> str:
        articles = await self._search(question)
        return await self.ask(f"Using {articles}, answer: {question}")

    def name(self) -> str:
        return f"bot-{self.model}"


bot = Bot("gpt-4o-mini")


@support.handler()
async def reply(ctx: Context, question: str) -> dict:
    text = await bot.answer_with_kb(question)  # expect: PT001
    return {"from": bot.name(), "text": text}
