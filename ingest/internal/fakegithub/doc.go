// Package fakegithub is an in-process fake of the parts of the GitHub REST
// API the ingest uses, for tests: workflow runs, the workflow runs listing
// of the repository or of one workflow (by id or file name; status, branch
// and created filters, newest first, paginated, capped at 1000 results of a
// filtered query as GitHub does), the run artifact listing with Link
// pagination, the artifact download answering 302 to a second server
// standing in for blob storage (which refuses a request carrying an
// Authorization header), issue comments (paginated list, create, edit,
// delete), pull requests of a commit, and injected faults — 401/403/404,
// 429 and secondary-rate-limit 403 with Retry-After, primary rate limits with
// X-RateLimit-Reset, 5xx, connections cut mid-download, hangs and corrupt
// bytes. It serves zips built from fixture run trees.
package fakegithub
