// Collects decoded text on the inference thread and releases it at most `maxRate` times per
// second, so the GUI thread receives a bounded number of updates however fast the engine is.
// 30 a second by default: each update costs the GUI thread the chat's re-layout and a frame, and
// at 60 a second a software renderer (a machine or VM without GPU rendering) could no longer
// keep up (bench/RESULTS.md, GUI responsiveness).
#pragma once
#include <QList>
#include <QString>
#include <optional>

#include "inferencetypes.h"

struct PendingText {
    QString text;
    int tokenCount = 0;
    int acceptedDraftTokens = 0;
    QList<TextRange> draftRanges;  // text of accepted drafts, in `text`
};

class TokenBatcher
{
public:
    explicit TokenBatcher(int maxRate = 30);

    // Adds one decoded piece at time `nowMs`; returns a batch when one is due.
    std::optional<PendingText> push(const QString &piece, qint64 nowMs);
    // The same for a piece of `tokens` tokens, of which `acceptedDrafts` were accepted drafts
    // whose text is the piece's first `draftTextLength` characters.
    std::optional<PendingText> push(const QString &piece, qint64 nowMs, int tokens, int acceptedDrafts,
                                    int draftTextLength);
    // Returns whatever is held (end of generation or cancel); nullopt when nothing is held.
    std::optional<PendingText> flush(qint64 nowMs);
    void reset();
    qint64 intervalMs() const { return m_intervalMs; }

private:
    qint64 m_intervalMs;
    std::optional<qint64> m_lastFlushMs;
    PendingText m_pending;
};
