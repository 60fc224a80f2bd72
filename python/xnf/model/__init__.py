"""The per-packet cost model (docs/cost-model.md): machine profiles, the prediction, the fit and the advisor."""
