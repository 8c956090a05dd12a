package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/glossobench/glossobench/infra/config"
)

// modelIdentity records what is measured (spec §5, §8): a GGUF file's
// SHA-256, so swapping the weights behind one path changes the pins; for a
// server, the model it reports serving and model.revision. A server that
// cannot be asked is a note, not an error: Prepare may run where the
// inference workers' server is not reachable.
func modelIdentity(ctx context.Context, m config.Model) (ModelIdentity, error) {
	kind, rest, _ := strings.Cut(m.Spec, ":")
	id := ModelIdentity{Backend: kind, Revision: m.Revision}
	if kind == "gguf" {
		sum, err := config.FileSHA256(rest)
		if err != nil {
			return id, err
		}
		id.File, id.SHA256 = filepath.Base(rest), sum
		return id, nil
	}
	base := strings.TrimPrefix(m.Spec, "openai:")
	name, err := servedModel(ctx, base, m.Name, os.Getenv(m.APIKeyEnv))
	if err != nil {
		id.Note = "server model name not recorded: " + err.Error()
	}
	id.ServerModel = name
	return id, nil
}

// otherModel says how two identities of a run's model differ, or "" when
// they may be the same model: the weights' SHA-256, the model a server
// reports and the revision are compared where both sides recorded them (a
// file's name is not the model).
func otherModel(was, now ModelIdentity) string {
	var diff []string
	if was.Backend != now.Backend {
		diff = append(diff, fmt.Sprintf("backend %s, now %s", was.Backend, now.Backend))
	}
	if was.SHA256 != "" && now.SHA256 != "" && was.SHA256 != now.SHA256 {
		diff = append(diff, fmt.Sprintf("sha256 %s, now %s", was.SHA256, now.SHA256))
	}
	if was.ServerModel != "" && now.ServerModel != "" && was.ServerModel != now.ServerModel {
		diff = append(diff, fmt.Sprintf("server model %s, now %s", was.ServerModel, now.ServerModel))
	}
	if was.Revision != now.Revision {
		diff = append(diff, fmt.Sprintf("revision %q, now %q", was.Revision, now.Revision))
	}
	return strings.Join(diff, "; ")
}

// servedModel asks an OpenAI-compatible server's /v1/models which model it
// serves: the configured name when it is listed, else the only one listed.
func servedModel(ctx context.Context, base, want, key string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	url := strings.TrimSuffix(base, "/")
	if !strings.HasSuffix(url, "/v1") {
		url += "/v1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/models", nil)
	if err != nil {
		return "", err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("GET /v1/models: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /v1/models: %s", resp.Status)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return "", fmt.Errorf("GET /v1/models: %w", err)
	}
	for _, d := range list.Data {
		if d.ID == want && want != "" {
			return d.ID, nil
		}
	}
	if len(list.Data) == 1 {
		return list.Data[0].ID, nil
	}
	return "", fmt.Errorf("GET /v1/models lists %d models, none named %q (set model.name)", len(list.Data), want)
}
