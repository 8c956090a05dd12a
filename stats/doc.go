// Package stats holds the statistics GlossoBench publishes with every number:
//
//   - rank correlations: Spearman ρ (average ranks) and Kendall τ-b (ties),
//     with p-values computed as scipy.stats does (Spearman, Kendall,
//     KendallTau, KendallExactP);
//   - seeded Monte-Carlo permutation tests, p = (count+1)/(resamples+1)
//     (PermutationP, SpearmanPermutation, PairedPermutation);
//   - percentile bootstrap intervals with type-7 quantiles (Quantile,
//     PercentileBootstrap, MeanCI, PairedBootstrap);
//   - the mean score over axes: the weighted mean and its interval that
//     result.json publishes (WeightedMean, MSInterval), the ranking mean
//     over the axes that discriminate (RankingWeights, CommonRanking), and
//     paired comparisons of two runs (MSBootstrap, MSPermutation,
//     CompareAxes, CompareStatistics);
//   - agreement and ratings: Cohen's κ as scikit-learn computes it
//     (CohenKappa), sequential Elo and Bradley–Terry with bootstrap
//     intervals over matches (Elo, BradleyTerry, RatingsBootstrap);
//   - for the leakage audit: ROC AUC, average precision, random forests and
//     logistic regression.
//
// Every random procedure takes an explicit seed and uses math/rand/v2's PCG,
// so a result is reproducible from its inputs alone. Degenerate input (too
// few points, a constant vector, one class) yields NaN and an error naming
// the reason, never a panic. The reference values the tests check against
// are the libraries' own published test vectors and testdata/stats/golden.json,
// written by testdata/stats/make_golden.py.
package stats
