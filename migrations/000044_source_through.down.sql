DROP TABLE source_through;
