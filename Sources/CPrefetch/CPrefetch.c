// CPrefetch is a header (include/CPrefetch.h); SwiftPM wants a C target to have a source file.
#include "CPrefetch.h"
