-- A shown row deleted since it was shown (an override's purge) is marked
-- on its point, so that the impact of the next update names it deleted
-- without probing benchmark_results for every point it replaces: a probe
-- reads the row's heap page to check its visibility, and the older run's
-- pages are cold (2000 of them at 200 stored runs of 2000 points).
ALTER TABLE latest_benchmark_points ADD COLUMN result_deleted boolean NOT NULL DEFAULT false;

UPDATE latest_benchmark_points p SET result_deleted = true
WHERE NOT EXISTS (SELECT FROM benchmark_results b WHERE b.id = p.result_id);

CREATE FUNCTION latest_benchmark_points_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE latest_benchmark_points SET result_deleted = true WHERE result_id = OLD.id;
    RETURN NULL;
END $$;

CREATE TRIGGER benchmark_results_deleted_points AFTER DELETE ON benchmark_results
    FOR EACH ROW EXECUTE FUNCTION latest_benchmark_points_deleted();
