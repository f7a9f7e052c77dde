module github.com/inferencex/ingest

go 1.26.8

require (
	github.com/goccy/go-json v0.12.0
	github.com/golang-migrate/migrate/v4 v4.20.1
	github.com/google/go-github/v66 v66.0.0
	github.com/jackc/pgx/v5 v5.13.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/zap v1.28.0
	golang.org/x/sync v0.22.0
	golang.org/x/sys v0.46.0
	golang.org/x/term v0.44.0
)

require (
	github.com/google/go-querystring v1.1.0 // indirect
	github.com/jackc/pgerrcode v0.0.0-20220416144525-469b46aa5efa // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/text v0.41.0 // indirect
)
