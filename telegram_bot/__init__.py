"""The Hokm Telegram bot: handlers, rendering, storage and the app."""
