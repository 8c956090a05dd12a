package workflows

import (
	"slices"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The search attributes that find a run in the Temporal UI or with
// `temporal workflow list --query 'GlossoModelID="tiny-llama"'`.
var (
	ModelIDAttribute      = temporal.NewSearchAttributeKeyKeyword("GlossoModelID")
	BenchVersionAttribute = temporal.NewSearchAttributeKeyKeyword("GlossoBenchVersion")
	AxesAttribute         = temporal.NewSearchAttributeKeyKeywordList("GlossoAxes")
)

// SearchAttributes are the attributes' names and types, as a namespace
// registers them.
var SearchAttributes = map[string]enumspb.IndexedValueType{
	ModelIDAttribute.GetName():      enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	BenchVersionAttribute.GetName(): enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	AxesAttribute.GetName():         enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST,
}

// upsertSearchAttributes sets the run's search attributes itself, so a run
// started by the Temporal CLI or a Schedule is found like one started by
// `glossobench run`. Only those the namespace has are set (Prepare found
// which, so replay sees the same answer); a namespace without them still
// runs, and the memo carries the same facts. Runs started before the
// upsert existed replay without it.
func (r *evalRun) upsertSearchAttributes(ctx workflow.Context, axes []string) error {
	if workflow.GetVersion(ctx, "search-attributes", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	var set []temporal.SearchAttributeUpdate
	has := func(k temporal.SearchAttributeKey) bool { return slices.Contains(r.plan.SearchAttributes, k.GetName()) }
	if has(ModelIDAttribute) {
		set = append(set, ModelIDAttribute.ValueSet(r.plan.ModelID))
	}
	if has(BenchVersionAttribute) {
		set = append(set, BenchVersionAttribute.ValueSet(r.plan.BenchVersion))
	}
	if has(AxesAttribute) {
		set = append(set, AxesAttribute.ValueSet(axes))
	}
	if len(set) == 0 {
		return nil
	}
	return workflow.UpsertTypedSearchAttributes(ctx, set...)
}
