"""`import restate as r`: r.Service, r.VirtualObject and r.Workflow handlers are found."""

import os
import random

import restate as r

catalog = r.Service("Catalog")
shelf = r.VirtualObject("Shelf")
restock = r.Workflow("Restock")


@catalog.handler()
async def featured(ctx: r.Context, items: list[str]) -> str:
    return random.choice(items)  # expect: PT003


@shelf.handler()
async def location(ctx: r.ObjectContext) -> str:
    return os.getenv("WAREHOUSE", "A1")  # expect: PT004


@restock.main()
async def run(ctx: r.WorkflowContext, sku: str) -> dict:
    supplier = os.environ["SUPPLIER_URL"]  # expect: PT004
    return {"sku": sku, "supplier": supplier}


app = r.app(services=[catalog, shelf, restock])
