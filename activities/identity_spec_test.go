package activities

import (
	"context"
	"testing"

	"github.com/glossobench/glossobench/infra/config"
)

// A gguf spec with options (gguf:PATH?ctx=N, as the README documents) is
// the file PATH: Prepare hashed "PATH?ctx=N" as a file name and failed.
func TestModelIdentityOfSpecWithOptions(t *testing.T) {
	id, err := modelIdentity(context.Background(), config.Model{Spec: "gguf:../testdata/models/tiny-llama/tiny-llama.gguf?ctx=512&chat=qa"})
	if err != nil || id.File != "tiny-llama.gguf" || len(id.SHA256) != 64 {
		t.Fatalf("identity %+v, %v", id, err)
	}
}
