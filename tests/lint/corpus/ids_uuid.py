"""PT003: uuid.uuid4 and uuid.uuid1 in handlers; deterministic uuid5 and UUID(...) are not reported."""

import uuid

import restate
from restate import Context

orders = restate.Service("Orders")

NAMESPACE = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")


@orders.handler()
async def create(ctx: Context, order: dict) -> str:
    order_id = str(uuid.uuid4())  # expect: PT003
    order["trace"] = uuid.uuid1().hex  # expect: PT003
    order["id"] = order_id
    return order_id


@orders.handler()
async def key_for(ctx: Context, sku: str) -> str:
    key = uuid.uuid5(NAMESPACE, sku)
    return str(uuid.UUID(bytes=key.bytes))
