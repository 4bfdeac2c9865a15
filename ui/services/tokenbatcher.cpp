#include "tokenbatcher.h"

#include <algorithm>

TokenBatcher::TokenBatcher(int maxRate)
    : m_intervalMs((1000 + std::max(1, maxRate) - 1) / std::max(1, maxRate))
{
}

std::optional<PendingText> TokenBatcher::push(const QString &piece, qint64 nowMs)
{
    return push(piece, nowMs, 1, 0, 0);
}

std::optional<PendingText> TokenBatcher::push(const QString &piece, qint64 nowMs, int tokens, int acceptedDrafts,
                                              int draftTextLength)
{
    const int length = std::clamp(draftTextLength, 0, int(piece.size()));
    if (length > 0) {
        const int start = int(m_pending.text.size());
        QList<TextRange> &ranges = m_pending.draftRanges;
        if (!ranges.isEmpty() && ranges.constLast().start + ranges.constLast().length == start)
            ranges.last().length += length;  // continues the previous run
        else
            ranges.append({start, length});
    }
    m_pending.text += piece;
    m_pending.tokenCount += tokens;
    m_pending.acceptedDraftTokens += acceptedDrafts;
    if (m_lastFlushMs && nowMs - *m_lastFlushMs < m_intervalMs)
        return std::nullopt;
    return flush(nowMs);
}

std::optional<PendingText> TokenBatcher::flush(qint64 nowMs)
{
    if (m_pending.tokenCount == 0 && m_pending.text.isEmpty())
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
