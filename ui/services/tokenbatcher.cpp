#include "tokenbatcher.h"

#include <algorithm>

TokenBatcher::TokenBatcher(int maxRate)
    : m_intervalMs((1000 + std::max(1, maxRate) - 1) / std::max(1, maxRate))
{
}

std::optional<PendingText> TokenBatcher::push(const QString &piece, qint64 nowMs)
{
    m_pending.text += piece;
    ++m_pending.tokenCount;
    if (m_lastFlushMs && nowMs - *m_lastFlushMs < m_intervalMs)
        return std::nullopt;
    return flush(nowMs);
}

std::optional<PendingText> TokenBatcher::flush(qint64 nowMs)
{
    if (m_pending.tokenCount == 0)
        return std::nullopt;
    PendingText out = std::move(m_pending);
    m_pending = {};
    m_lastFlushMs = nowMs;
    return out;
}

void TokenBatcher::reset()
{
    m_pending = {};
    m_lastFlushMs.reset();
}
