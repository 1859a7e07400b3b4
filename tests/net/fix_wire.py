"""Resources the wire tests share (served next to the demo set)."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

from glove_scratchpad.resources import Bindings, Resource, define_resource


class Item(BaseModel):
    id: int = Field(description="Item id")
    name: str
    price: float


ITEMS = [Item(id=i, name=f"item {i}", price=i * 1.5) for i in range(1, 101)]


class Slow(BaseModel):
    seconds: float = Field(description="How long the call sleeps (required)")
    done: bool


# Seconds arguments of `slow` calls that were cancelled before they finished.
CANCELLED: list[float] = []


async def _slow(b: Bindings) -> list[Slow]:
    if b.one("seconds") < 0:
        raise ValueError("seconds must not be negative")
    try:
        await asyncio.sleep(b.one("seconds"))
    except asyncio.CancelledError:
        CANCELLED.append(b.one("seconds"))
        raise
    return [Slow(seconds=b.one("seconds"), done=True)]


def wire_resources() -> list[Resource]:
    return [
        define_resource("items", schema=Item, primary_key=["id"], volatility="immutable",
                        description="A hundred items", select=lambda b: ITEMS),
        define_resource("slow", schema=Slow, keys=["seconds"], volatility="volatile",
                        description="Sleeps, for cancellation tests", select=_slow),
    ]
