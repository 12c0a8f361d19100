"""The Mini App: the web adapter over the service (page, JSON API, live push).

It may import telegram_bot.service, chat, platform and core; nothing below imports it.
"""
