package ir

// indexingOps: indexing, scatter/gather, detection and signal ops (issue 13).
var indexingOps = []OpInfo{}
