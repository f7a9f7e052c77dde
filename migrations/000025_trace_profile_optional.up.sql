-- A trace sidecar may have no profile export: the reference ingest stored
-- AgentX traces with only their server metrics (profile_export_jsonl_gz
-- NULL), and `ingest adopt` keeps them so, with the reference's payloads.
-- The dashboard's view gives NULL back for the profile and its size, as
-- the reference's table did. Our traces stage still requires a profile for
-- what it stores.
ALTER TABLE agentic_trace_replay ALTER COLUMN profile_export_digest DROP NOT NULL;
ALTER TABLE agentic_trace_replay ALTER COLUMN profile_export_size DROP NOT NULL;
ALTER TABLE agentic_trace_replay ADD CONSTRAINT agentic_trace_replay_profile_size_check
    CHECK ((profile_export_digest IS NULL) = (profile_export_size IS NULL));
