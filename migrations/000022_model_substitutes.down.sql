DROP TABLE IF EXISTS model_substitutes;
