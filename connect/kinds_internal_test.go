package connect

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// Every kind in the registry is whole: a label, a puller, a validation, and
// a key field that is a field of Input; names are unique; an unknown kind
// is refused naming the known ones.
func TestRegistryKindsAreWhole(t *testing.T) {
	fields := map[string]bool{}
	it := reflect.TypeFor[Input]()
	for i := range it.NumField() {
		fields[strings.Split(it.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	seen := map[string]bool{}
	for _, k := range registry {
		if k.name == "" || seen[k.name] || k.label == "" || k.puller == nil || k.validate == nil || !fields[k.keyField] {
			t.Errorf("kind %+v", k)
		}
		seen[k.name] = true
		if got, ok := kindOf(k.name); !ok || got.name != k.name || KindLabel(k.name) != k.label || keyField(k.name) != k.keyField {
			t.Errorf("lookup of %s", k.name)
		}
		// Its own validation runs on its fields alone: an empty form names
		// a field of the kind's.
		_, _, err := Input{Name: "x", Kind: k.name}.validate(time.Now())
		ies := InputErrors(err)
		if len(ies) == 0 || !fields[ies[0].Field] || ies[0].Field == "name" {
			t.Errorf("%s with no fields: %v", k.name, err)
		}
	}
	if strings.Join(Kinds(), ",") != "openai,anthropic,aws-s3,azure-blob,gcp-bigquery" {
		t.Errorf("Kinds() = %v", Kinds())
	}
	_, _, err := Input{Name: "x", Kind: "dropbox"}.validate(time.Now())
	if err == nil || !strings.Contains(err.Error(), strings.Join(Kinds(), ", ")) {
		t.Errorf("unknown kind: %v", err)
	}
	if KindLabel("dropbox") != "dropbox" {
		t.Error("an unknown kind's label")
	}
}
