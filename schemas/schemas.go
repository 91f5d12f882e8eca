// Package schemas holds the JSON Schema of agents.yaml, embedded so that the
// binary validates and prints exactly the schema it was built with.
package schemas

import _ "embed"

// AgentsSchema is schemas/agents.schema.json (JSON Schema 2020-12), the
// native agents.yaml format.
//
//go:embed agents.schema.json
var AgentsSchema []byte
