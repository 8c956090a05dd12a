package activities

import "github.com/glossobench/glossobench/infra/runfiles"

// The types of a run's files belong to infra/runfiles; these names keep the
// stages' signatures (and the workflow's) reading as before.
type (
	Result             = runfiles.Result
	AxisReport         = runfiles.AxisReport
	MeasurementProfile = runfiles.MeasurementProfile
	ResultSummary      = runfiles.ResultSummary
	Skip               = runfiles.Skip
	DedupResult        = runfiles.DedupResult
	AxisDedup          = runfiles.AxisDedup
	AuditSummary       = runfiles.AuditSummary
	AuditSensitivity   = runfiles.AuditSensitivity
	ModelIdentity      = runfiles.ModelIdentity
	ModelChange        = runfiles.ModelChange
	Plan               = runfiles.Plan
	AxisPlan           = runfiles.AxisPlan
	AxisOutcome        = runfiles.AxisOutcome
	manifest           = runfiles.Manifest
)
