DROP TABLE upload_progress;
