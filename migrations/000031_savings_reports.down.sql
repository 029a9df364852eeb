DROP TABLE savings_reports;
