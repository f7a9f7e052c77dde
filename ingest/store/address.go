package store

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Address names the database a connection URL reaches — host, port and
// database name, never the user or password — so that two URLs can be
// compared and a database named in a message. An unparseable URL has no
// address ("").
func Address(url string) string {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return ""
	}
	c := cfg.ConnConfig
	return fmt.Sprintf("%s:%d/%s", c.Host, c.Port, c.Database)
}
