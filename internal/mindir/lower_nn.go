package mindir

// NN, shape and data-movement ops: lowering (IR -> MindSpore primitive) and
// lifting (the primitive -> IR).

var lowerNNTable = map[string]lowerFunc{}

var liftNNTable = map[string]func(*mnode) (any, error){}
