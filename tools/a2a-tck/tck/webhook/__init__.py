"""Webhook receiver for push notification delivery testing."""
