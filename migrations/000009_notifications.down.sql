-- Drops notification channels, webhook signing secrets and the delivery
-- history. Budgets and their alert history are untouched.
DROP TABLE IF EXISTS deliveries, webhook_secrets, notification_channels;
