package mindir

// lowerQuantTable and liftQuantTable: the issue-13 op family's MindSpore
// primitives (written by lower, read back by lift); IR ops of the family
// that have no MindSpore primitive are written as Custom(type="gkconv.<op>").
var lowerQuantTable = schemaGated(map[string]lowerFunc{})

var liftQuantTable = map[string]func(*mnode) (any, error){}
