package mindir

// Elementwise, broadcast and reduction ops: lowering (IR -> MindSpore
// primitive) and lifting (the primitive -> IR).

var lowerElemTable = map[string]lowerFunc{}

var liftElemTable = map[string]func(*mnode) (any, error){}
