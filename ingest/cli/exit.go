package cli

// Exit codes. CI distinguishes a clean ingest, one that wrote the run but
// left some rows or files out, and one that wrote nothing.
const (
	ExitOK                    = 0
	ExitAborted               = 1 // the ingest (or command) failed; nothing was written
	ExitDifferences           = 1 // compare: a difference no rule explains (verify: a check failed)
	ExitUsage                 = 2 // bad flags or arguments, a database whose schema this program does not own (or, for a read-only command, no schema at all), one a write finds not migrated (--no-migrate), or a target that is production's database too
	ExitCompletedWithFailures = 3 // the run was written, some items failed
	ExitCoverageRefused       = 4 // the coverage guard (refuse) rolled the run back: it would shrink a published curve
)
