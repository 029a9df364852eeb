DROP TABLE IF EXISTS app_secrets;
DROP TABLE IF EXISTS digest_unsubscribes;
DROP TABLE IF EXISTS digest_settings;
