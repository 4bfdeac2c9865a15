#include "inferencetypes.h"



QString cacheKindName(CacheKind kind)
{
    switch (kind) {
    case CacheKind::Fp16: return QStringLiteral("FP16");
    case CacheKind::Fp8: return QStringLiteral("FP8");
    case CacheKind::Q8: return QStringLiteral("Q8");
    case CacheKind::Q6: return QStringLiteral("Q6");
    case CacheKind::Q4: return QStringLiteral("Q4");
    }
    return QStringLiteral("FP16");
}


