DROP TABLE IF EXISTS changelog_entries;
DROP TABLE IF EXISTS eval_samples;
DROP TABLE IF EXISTS eval_sample_texts;
DROP TABLE IF EXISTS eval_results;
