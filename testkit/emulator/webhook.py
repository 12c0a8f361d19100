"""Webhook mode: while setWebhook has a URL, updates are POSTed there one by one."""

from __future__ import annotations

import asyncio
import time

import aiohttp

from testkit.emulator.state import World

__all__ = ["WebhookDeliverer"]

RETRY_DELAY = 0.5


class WebhookDeliverer:
    """Delivers queued updates to the webhook URL, retrying failed deliveries."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.busy = False
        self.delivered = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="emulator webhook delivery")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run(self) -> None:
        queue = self.world.updates
        timeout = aiohttp.ClientTimeout(total=10)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            while not queue.closed:
                batch = queue.peek(1)
                if not self.world.webhook.url or not batch:
                    await queue.wait_change()
                    continue
                self.busy = True
                try:
                    delivered = await self._post(session, batch[0])
                finally:
                    self.busy = False
                if delivered:
                    queue.mark_fetched(batch)
                    queue.confirm(batch[0]["update_id"] + 1)
                    self.delivered += 1
                else:
                    await asyncio.sleep(RETRY_DELAY)

    async def _post(self, session: aiohttp.ClientSession, update: dict[str, object]) -> bool:
        hook = self.world.webhook
        headers = (
            {"X-Telegram-Bot-Api-Secret-Token": hook.secret_token} if hook.secret_token else {}
        )
        try:
            async with session.post(hook.url, json=update, headers=headers) as response:
                if 200 <= response.status < 300:
                    return True
                error = f"Wrong response from the webhook: {response.status} {response.reason}"
        except (aiohttp.ClientError, TimeoutError) as exc:
            error = f"Connection failed: {exc!r}"
        hook.last_error_date = int(time.time())
        hook.last_error_message = error
        return False
