"""A controller in 30 lines: writes on every Order how many of its dishes are garnished.

Run it against a running cluster:  .venv/bin/python examples/dish_counter.py --server http://127.0.0.1:8000
It joins the picture as a new spoke named `dish-counter`, and talks to nobody but the hub.
"""
import argparse
import asyncio

from control.client.component import connect, run_all
from control.client.informer import Handlers, Informer
from control.client.resources import key_of, split_key
from control.client.runner import Runner
from control.client.workqueue import WorkQueue
from control.restaurant.manifests import DISHES, ORDERS

SERVED = "kitchen.kubekitchen.dev/served"  # the annotation this controller keeps true


async def main(server: str) -> None:
    client = connect(server, "dish-counter")  # 1. who we are: the User-Agent the hub shows
    orders, dishes, queue = Informer(client, ORDERS), Informer(client, DISHES), WorkQueue()
    # 2. handlers only turn changes into keys: an order's own key, or the key of a dish's order
    orders.add_handlers(Handlers(on_add=lambda o: queue.add(key_of(o)), on_update=lambda _, o: queue.add(key_of(o))))
    dish_order = lambda d: queue.add(f"{d['metadata']['namespace']}/{d['spec']['order']}")  # noqa: E731
    dishes.add_handlers(Handlers(on_add=dish_order, on_update=lambda _, d: dish_order(d), on_delete=dish_order))

    async def reconcile(key: str) -> None:  # 3. compare what is with what should be, fix the difference
        namespace, name = split_key(key)
        order = orders.cache.get(key)
        if order is None:
            return
        garnished = sum(1 for d in dishes.cache.by_index("namespace", namespace)
                        if d["spec"]["order"] == name and (d.get("status") or {}).get("garnished"))
        served = f"{garnished}/{order['spec']['count']}"
        if (order["metadata"].get("annotations") or {}).get(SERVED) != served:  # idempotent: write only a change
            await client.patch(ORDERS, name, {"metadata": {"annotations": {SERVED: served}}}, namespace)

    runner = Runner("dish-counter", reconcile, queue, [orders, dishes])  # 4. run it all until Ctrl-C
    await run_all(client, [orders.run(), dishes.run(), runner.run()])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="http://127.0.0.1:8000", help="the hub's URL")
    try:
        asyncio.run(main(parser.parse_args().server))
    except KeyboardInterrupt:
        pass
