-- Usage retention deletes by age and the usage page groups by day: both read created_at.
CREATE INDEX usage_reports_created_at ON usage_reports (created_at);
