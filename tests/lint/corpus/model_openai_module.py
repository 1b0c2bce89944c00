"""PT001: the module-level openai API (`openai.chat.completions.create`) and a local OpenAI() client."""

import openai
import restate
from restate import Context

classifier = restate.Service("Classifier")

LABELS = ["billing", "bug", "feature", "other"]


@classifier.handler()
async def classify(ctx: Context, ticket: str) -> str:
    messages = [{"role": "user", "content": f"Classify into one of {LABELS}:\n{ticket}"}]
    out = openai.chat.completions.create(model="gpt-4o-mini", messages=messages)  # expect: PT001
    return out.choices[0].message.content or "other"


@classifier.handler()
async def embed(ctx: Context, ticket: str) -> list[float]:
    local = openai.OpenAI(max_retries=0)
    result = local.embeddings.create(model="text-embedding-3-small", input=ticket)  # expect: PT001
    return result.data[0].embedding
