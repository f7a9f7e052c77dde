package benchmark

import (
	"fmt"

	"github.com/inferencex/ingest/ingest/catalog"
)

// ResultSchemaVersion is the InferenceX result_schema_version this ingest
// reads. A row without the field predates the contract and is read as
// version 1.
const ResultSchemaVersion = 1

// CheckResultSchemaVersion refuses a published row (a benchmark row or a
// run-stats entry) stamped with any result_schema_version but the JSON
// number 1: 2, 0, 1.5, "1", null and true are all refused, as the
// reference does (etl/result-schema-version.ts). An absent field is fine.
func CheckResultSchemaVersion(row map[string]any) error {
	v, ok := row["result_schema_version"]
	if !ok {
		return nil
	}
	if f, isNumber := jsonNumber(v); isNumber && f == ResultSchemaVersion {
		return nil
	}
	return fmt.Errorf("result_schema_version %s is not supported (this ingest reads %d)", catalog.DescribeValue(v), ResultSchemaVersion)
}
