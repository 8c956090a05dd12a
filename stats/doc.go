// Package stats holds the statistics GlossoBench publishes with every number:
// rank correlations (Spearman ρ, Kendall τ-b) with scipy-compatible p-values,
// seeded Monte-Carlo permutation tests, percentile bootstrap intervals with
// type-7 quantiles, paired tests, Cohen's κ, Elo and Bradley–Terry ratings.
//
// Every random procedure takes an explicit seed and uses math/rand/v2's PCG,
// so a result is reproducible from its inputs alone. Degenerate input
// (too few points, a constant vector) yields an error naming the reason,
// never a panic.
package stats
