DROP TABLE IF EXISTS dashboard_views;
