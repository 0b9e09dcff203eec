package ir

// controlFlowOps: control flow and sequence/optional values: If, Loop, Scan (issue 13).
var controlFlowOps = []OpInfo{}
