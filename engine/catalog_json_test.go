package engine

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tailgate-ci/tailgate/report/render"
)

// TestCatalogJSONValidates: the registries' catalog, as tailgate list
// --format json writes it, validates against docs/catalog.schema.json.
func TestCatalogJSONValidates(t *testing.T) {
	var b bytes.Buffer
	if err := render.WriteCatalogJSON(&b, Catalog()); err != nil {
		t.Fatal(err)
	}
	s, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "docs", "catalog.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("against docs/catalog.schema.json: %v", err)
	}
}
