"""Helpers defined below the handler that calls them are still followed; reported at the handler's call."""

import random

import restate
from restate import Context

quiz = restate.Service("Quiz")


@quiz.handler()
async def next_question(ctx: Context, topic: str) -> dict:
    question = pick_question(topic)  # expect: PT003
    deck = load_deck(topic)  # expect: PT005
    return {"topic": topic, "question": question, "size": len(deck)}


def pick_question(topic: str) -> str:
    return random.choice([f"What is {topic}?", f"Why {topic}?"])


def load_deck(topic: str) -> list[str]:
    with open(f"decks/{topic}.txt", encoding="utf-8") as f:
        return f.read().splitlines()
