package mindir

// lowerMiscTable and liftMiscTable: the issue-13 op family's MindSpore
// primitives (written by lower, read back by lift); IR ops of the family
// that have no MindSpore primitive are written as Custom(type="gkconv.<op>").
var lowerMiscTable = schemaGated(map[string]lowerFunc{})

var liftMiscTable = map[string]func(*mnode) (any, error){}
