// GUI responsiveness benchmark (issue #7): the real app UI (AppContext, the ExlStudio QML module,
// Main.qml) with a long saved conversation open in the chat page, while the simulated engine
// streams a reply into it at a set token rate. On the GUI thread it measures how late a 1 ms
// timer fires and how much CPU time the thread uses. Three runs, one process:
//   idle       the 1 ms timer alone, nothing streaming (what the timer itself costs);
//   streaming  a reply streams, the timer records its lateness;
//   no timer   the same reply again (Regenerate), without the timer: the busy figure to judge.
// A benchmark, not a test: it prints figures (table and one JSON line) and exits 0; bench/RESULTS.md
// keeps them. Runs offscreen unless QT_QPA_PLATFORM says otherwise (e.g. xcb under xvfb-run).
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSGRendererInterface>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QtQml/QQmlExtensionPlugin>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <ctime>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "app/appcontext.h"
#include "app/studio.h"
#include "services/combinedinferenceservice.h"
#include "services/fakeinferenceservice.h"
#include "services/remoteinferenceservice.h"

Q_IMPORT_QML_PLUGIN(ExlStudioPlugin)

namespace {
constexpr double kIdleSeconds = 3.0;
constexpr int kSettleMs = 500;          // after each reply: the last re-render and frame land here
constexpr double kPrefillTokensPerSecond = 1e6;  // the long prompt's prefill is not what is measured
constexpr double kTargetP99Ms = 16.0;
constexpr double kTargetMaxMs = 50.0;
constexpr double kTargetBusy = 0.30;

struct BenchOptions {
    double seconds = 20.0;
    double rate = 2000.0;
    int messages = 200;
    QString screenshotPath;  // a PNG of the window after the first reply, to see what the runs show
    QString error;
};

BenchOptions parseOptions(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "GUI responsiveness of EXL Studio while the simulated engine streams into a long conversation."));
    parser.addHelpOption();
    const QCommandLineOption seconds(QStringLiteral("seconds"), QStringLiteral("Stream for N seconds (default 20)."),
                                     QStringLiteral("N"), QStringLiteral("20"));
    const QCommandLineOption rate(QStringLiteral("rate"), QStringLiteral("Tokens per second (default 2000)."),
                                  QStringLiteral("TOKENS_PER_S"), QStringLiteral("2000"));
    const QCommandLineOption messages(QStringLiteral("messages"),
                                      QStringLiteral("Messages in the saved conversation (default 200)."),
                                      QStringLiteral("N"), QStringLiteral("200"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QStringLiteral("Write a PNG of the window to FILE after the first reply."),
                                        QStringLiteral("FILE"));
    parser.addOptions({seconds, rate, messages, screenshot});
    BenchOptions out;
    if (!parser.parse(arguments)) {
        out.error = parser.errorText();
        return out;
    }
    if (parser.isSet(QStringLiteral("help"))) {
        out.error = parser.helpText();
        return out;
    }
    out.screenshotPath = parser.value(screenshot);
    bool ok = false;
    out.seconds = parser.value(seconds).toDouble(&ok);
    if (!ok || out.seconds <= 0)
        out.error = QStringLiteral("--seconds takes a positive number, not '%1'.").arg(parser.value(seconds));
    out.rate = parser.value(rate).toDouble(&ok);
    if (!ok || out.rate <= 0)
        out.error = QStringLiteral("--rate takes a positive number of tokens per second, not '%1'.").arg(parser.value(rate));
    out.messages = parser.value(messages).toInt(&ok);
    if (!ok || out.messages < 0)
        out.error = QStringLiteral("--messages takes a count of zero or more, not '%1'.").arg(parser.value(messages));
    return out;
}

// ---- The saved conversation: user questions and assistant answers of realistic length, every
// third answer with a fenced code block, some with lists.

const char *const kTopics[] = {
    "the KV cache", "EXL2 bit widths", "speculative decoding", "the chat template", "prefill chunks",
    "memory bandwidth", "top-p sampling", "a CUDA graph", "the tokenizer", "quantization error",
};

QString userMessage(int pair)
{
    const QString topic = QString::fromLatin1(kTopics[pair % std::size(kTopics)]);
    QString text = QStringLiteral("Can you explain how %1 affects decode speed on a 24 GB card?").arg(topic);
    for (int i = 0; i < pair % 4; ++i)
        text += QStringLiteral(" I am running a 7B model at 4.0 bpw with a context of 8192 tokens and would like"
                               " to understand where the time goes before I change anything.");
    return text;
}

QString assistantMessage(int pair)
{
    const QString topic = QString::fromLatin1(kTopics[pair % std::size(kTopics)]);
    QString text = QStringLiteral("Short answer: %1 matters less than you would think, because batch-1 decoding"
                                  " reads every weight once per token and is bound by memory bandwidth.\n\n")
                       .arg(topic);
    for (int i = 0; i < 2 + pair % 4; ++i)
        text += QStringLiteral("In more detail, each decode step streams the quantized weights through the GEMV"
                               " kernels, then appends one row to the cache. With %1 the extra reads are small"
                               " next to the weights, so the step time moves by a few percent at most.\n\n")
                    .arg(topic);
    if (pair % 2 == 1)
        text += QStringLiteral("- weights: read once per token\n- cache: grows with the context\n"
                               "- sampling: negligible on the device\n\n");
    if (pair % 3 == 0) {
        text += QStringLiteral("```python\n");
        for (int line = 0; line < 8 + pair % 12; ++line)
            text += QStringLiteral("step_%1 = bandwidth / (weight_bytes + cache_bytes_per_token * %2)\n")
                        .arg(line)
                        .arg(512 * (line + 1));
        text += QStringLiteral("```\n\n");
    }
    text += QStringLiteral("Measure before and after with `exl bench`, which prints the bound beside the observed speed.");
    return text;
}

// Writes the conversation through the app's ChatStore, as a saved chat the app then opens.
qint64 writeConversation(const QString &databasePath, int messages, QString *error)
{
    ChatStore store;
    if (!store.open(databasePath)) {
        *error = QStringLiteral("could not open %1: %2").arg(databasePath, store.lastError());
        return 0;
    }
    const qint64 id = store.createConversation(QStringLiteral("A long conversation"));
    qint64 previous = 0;  // each message follows the one before: one branch
    for (int i = 0; id != 0 && i < messages; ++i) {
        const bool user = i % 2 == 0;
        const StoredMessage message{0, user ? QStringLiteral("user") : QStringLiteral("assistant"),
                                    user ? userMessage(i / 2) : assistantMessage(i / 2), {}, previous};
        if ((previous = store.appendMessage(id, message)) == 0) {
            *error = QStringLiteral("could not store message %1: %2").arg(i).arg(store.lastError());
            return 0;
        }
    }
    if (id == 0)
        *error = QStringLiteral("could not create the conversation: %1").arg(store.lastError());
    return id;
}

// ---- Measuring.

// The GUI thread's clocks: CPU time, and time spent runnable but waiting for a CPU (the
// scheduler's run delay, /proc/thread-self/schedstat; NaN where the kernel does not keep it).
class GuiThreadClock
{
public:
    // Call on the GUI thread: /proc/thread-self is the thread that opens it.
    GuiThreadClock() : m_schedstat(::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) {}
    ~GuiThreadClock()
    {
        if (m_schedstat >= 0)
            ::close(m_schedstat);
    }
    GuiThreadClock(const GuiThreadClock &) = delete;
    GuiThreadClock &operator=(const GuiThreadClock &) = delete;

    static double cpuMs()
    {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
    }
    double waitMs() const
    {
        char text[128];
        const ssize_t n = m_schedstat >= 0 ? ::pread(m_schedstat, text, sizeof text - 1, 0) : -1;
        if (n <= 0)
            return std::nan("");
        text[n] = '\0';
        unsigned long long running = 0, waiting = 0;
        return std::sscanf(text, "%llu %llu", &running, &waiting) == 2 ? waiting / 1e6 : std::nan("");
    }

private:
    int m_schedstat;
};

double processCpuTimeMs()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// The window's frames, counted on whichever thread renders them.
std::atomic<int> g_frames{0};
std::atomic<bool> g_renderThreadSeen{false};
// GUI-thread CPU time in the scene graph's sync and render steps, where the render loop runs them
// on the GUI thread (the software scene graph offscreen); a threaded loop runs them elsewhere.
double g_sceneGraphCpuMs = 0;

// GUI-thread CPU time of each token batch's delivery: the chat model's update and what it sets off
// at once (the bindings, the Markdown of the changed segment parsed and laid out).
struct BatchMeter {
    double startCpuMs = 0;
    std::vector<double> cpuMs;
};
BatchMeter g_batches;

const auto kProcessStart = std::chrono::steady_clock::now();

// Where a stretch of the GUI thread's time went.
struct Span {
    double wallMs = 0;
    double cpuMs = 0;      // running
    double waitMs = 0;     // runnable, waiting for a CPU (other threads and processes)
    double processCpuMs = 0;
    double sceneGraphCpuMs = 0;  // of cpuMs: the scene graph's sync and render on the GUI thread
    int frames = 0;

    static Span now(const GuiThreadClock &clock)
    {
        return {std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - kProcessStart).count(),
                GuiThreadClock::cpuMs(), clock.waitMs(), processCpuTimeMs(), g_sceneGraphCpuMs, g_frames};
    }
    Span operator-(const Span &o) const
    {
        return {wallMs - o.wallMs, cpuMs - o.cpuMs, waitMs - o.waitMs, processCpuMs - o.processCpuMs,
                sceneGraphCpuMs - o.sceneGraphCpuMs, frames - o.frames};
    }
    Span &operator+=(const Span &o)
    {
        wallMs += o.wallMs;
        cpuMs += o.cpuMs;
        waitMs += o.waitMs;
        processCpuMs += o.processCpuMs;
        sceneGraphCpuMs += o.sceneGraphCpuMs;
        frames += o.frames;
        return *this;
    }
};

// A tick late by more than kTargetP99Ms: when (seconds after the probe started) and where its time went.
struct LateTick {
    double atSeconds = 0;
    Span span;
};

// A 1 ms precise timer on the GUI thread that records how late each tick is (interval - 1 ms)
// and, for ticks late by more than kTargetP99Ms, where the interval went.
class LatenessProbe
{
public:
    explicit LatenessProbe(const GuiThreadClock &clock) : m_clock(clock)
    {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(1);
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            const Span now = Span::now(m_clock);
            const Span tick = now - m_last;
            m_latenessMs.push_back(tick.wallMs - 1.0);
            if (tick.wallMs - 1.0 > kTargetP99Ms)
                m_late.push_back({(m_last.wallMs - m_start.wallMs) / 1000, tick});
            m_last = now;
        });
    }
    void start()
    {
        m_latenessMs.clear();
        m_late.clear();
        m_start = m_last = Span::now(m_clock);
        m_timer.start();
    }
    void stop() { m_timer.stop(); }
    std::vector<double> latenessMs() const { return m_latenessMs; }
    std::vector<LateTick> late() const { return m_late; }

private:
    const GuiThreadClock &m_clock;
    QTimer m_timer;
    std::vector<double> m_latenessMs;
    std::vector<LateTick> m_late;
    Span m_start;
    Span m_last;
};

double nearestRank(std::vector<double> values, double q)
{
    if (values.empty())
        return std::nan("");
    std::sort(values.begin(), values.end());
    const size_t rank = size_t(std::ceil(q * double(values.size())));
    return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

struct RunResult {
    QString name;
    Span busy;   // first batch to the end of the reply (idle: the whole run)
    int tokens = 0;
    std::vector<double> batchCpuMs;
    std::vector<double> latenessMs;  // first batch to kSettleMs after the end of the reply
    std::vector<LateTick> late;  // the ticks late by more than kTargetP99Ms

    double busyFraction() const { return busy.wallMs > 0 ? busy.cpuMs / busy.wallMs : 0; }
    // Without the scene graph's sync and render: the GUI thread's share under a threaded render loop.
    double busyFractionWithoutSceneGraph() const
    {
        return busy.wallMs > 0 ? (busy.cpuMs - busy.sceneGraphCpuMs) / busy.wallMs : 0;
    }
    double percentile(double q) const { return nearestRank(latenessMs, q); }
    int lateTicks() const { return int(late.size()); }
};

void waitMs(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

RunResult runIdle(const GuiThreadClock &clock, LatenessProbe &probe)
{
    RunResult r;
    r.name = QStringLiteral("idle, 1 ms timer");
    const Span start = Span::now(clock);
    probe.start();
    waitMs(int(kIdleSeconds * 1000));
    probe.stop();
    r.busy = Span::now(clock) - start;
    r.latenessMs = probe.latenessMs();
    r.late = probe.late();
    return r;
}

// Streams one reply (a new message, or Regenerate of the last reply) and measures it; nullopt
// with `error` set when the reply does not finish in time.
std::optional<RunResult> runStreaming(AppContext &context, const GuiThreadClock &clock, LatenessProbe *probe,
                                      bool regenerate, double timeoutSeconds, QString *error)
{
    RunResult r;
    r.name = probe ? QStringLiteral("streaming, 1 ms timer") : QStringLiteral("streaming, no timer");
    ChatViewModel *chat = context.chat();
    QEventLoop loop;
    Span start;
    bool started = false;
    bool finished = false;
    // After ChatViewModel's own handler (connected first): the first batch is already in the view.
    const auto tokens = QObject::connect(context.service(), &InferenceService::tokensArrived, &loop,
                                         [&](const TokenBatch &batch) {
        if (!started) {
            started = true;
            start = Span::now(clock);
            g_batches.cpuMs.clear();
            if (probe)
                probe->start();
        }
        r.tokens += batch.tokenCount;
    });
    const auto done = QObject::connect(chat, &ChatViewModel::replyFinished, &loop, [&] {
        finished = true;
        r.busy = Span::now(clock) - start;
        r.batchCpuMs = g_batches.cpuMs;
        QTimer::singleShot(kSettleMs, &loop, &QEventLoop::quit);
    });
    QTimer::singleShot(int(timeoutSeconds * 1000), &loop, &QEventLoop::quit);
    const bool asked = regenerate
        ? chat->regenerate()
        : chat->send(QStringLiteral("Write a long, detailed guide to tuning decode speed, with code examples."));
    if (asked)
        loop.exec();
    if (probe) {
        probe->stop();
        r.latenessMs = probe->latenessMs();
        r.late = probe->late();
    }
    QObject::disconnect(tokens);
    QObject::disconnect(done);
    if (!asked || !started || !finished) {
        *error = !asked ? QStringLiteral("the chat did not accept the message: %1").arg(chat->lastError())
                        : QStringLiteral("the reply did not finish within %1 s (%2 tokens arrived)")
                              .arg(timeoutSeconds)
                              .arg(r.tokens);
        return std::nullopt;
    }
    return r;
}

// ---- The scene.


// Every item under `item` in the visual tree (delegates have no QObject parent to find them by).
void collectItems(QQuickItem *item, QList<QQuickItem *> *out)
{
    for (QQuickItem *child : item->childItems()) {
        out->append(child);
        collectItems(child, out);
    }
}

// The chat page's message list (the ListView whose model is the chat) and its instantiated bubbles.
std::pair<QQuickItem *, int> messageList(QQuickWindow *window, ChatViewModel *chat)
{
    QList<QQuickItem *> items;
    collectItems(window->contentItem(), &items);
    for (QQuickItem *item : std::as_const(items)) {
        if (!item->inherits("QQuickListView") || item->property("model").value<QObject *>() != chat)
            continue;
        QList<QQuickItem *> children;
        collectItems(item, &children);
        const auto bubbles = std::count_if(children.begin(), children.end(), [](QQuickItem *child) {
            return QByteArray(child->metaObject()->className()).startsWith("MessageBubble");
        });
        return {item, int(bubbles)};
    }
    return {nullptr, 0};
}

QString graphicsApiName(QQuickWindow *window)
{
    switch (window->rendererInterface()->graphicsApi()) {
    case QSGRendererInterface::Software: return QStringLiteral("software");
    case QSGRendererInterface::OpenGL: return QStringLiteral("opengl");
    case QSGRendererInterface::Vulkan: return QStringLiteral("vulkan");
    case QSGRendererInterface::OpenVG: return QStringLiteral("openvg");
    default: return QStringLiteral("other");
    }
}

QString formatMs(double ms)
{
    return std::isnan(ms) ? QStringLiteral("-") : QString::number(ms, 'f', 2);
}

// The one-minute load average (other processes compete with the GUI thread for the CPUs).
QString loadAverage()
{
    QFile file(QStringLiteral("/proc/loadavg"));
    return file.open(QIODevice::ReadOnly) ? QString::fromLatin1(file.readLine()).section(u' ', 0, 0) : QStringLiteral("?");
}

int fail(const QString &message)
{
    std::fprintf(stderr, "gui_responsiveness_bench: %s\n", qPrintable(message));
    return 1;
}
}  // namespace

int main(int argc, char *argv[])
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);  // QApplication: Qt Charts (the telemetry page) draws through widgets
    QApplication::setApplicationName(QStringLiteral("exl-studio"));
    const BenchOptions options = parseOptions(app.arguments());
    if (!options.error.isEmpty()) {
        std::fprintf(stderr, "%s\n", qPrintable(options.error));
        return 2;
    }
    const int replyTokens = int(std::lround(options.rate * options.seconds));

    QTemporaryDir dataDir;
    if (!dataDir.isValid())
        return fail(QStringLiteral("could not make a temporary data folder: %1").arg(dataDir.errorString()));
    QString error;
    const qint64 conversationId =
        writeConversation(QDir(dataDir.path()).filePath(QStringLiteral("chats.sqlite")), options.messages, &error);
    if (conversationId == 0)
        return fail(error);

    // The app as --fake builds it (AppContext::createSimulated), with the engine's timing set here.
    FakeTiming timing;
    timing.prefillTokensPerSecond = kPrefillTokensPerSecond;
    timing.decodeTokensPerSecond = options.rate;
    timing.loadSteps = 1;
    timing.loadStepMs = 0;
    timing.replyRepeats = replyTokens / FakeGenerationBackend::scriptTokenCount() + 1;
    AppOptions appOptions;
    appOptions.dataDir = dataDir.path();
    appOptions.page = QStringLiteral("chat");
    constexpr qint64 kGiB = 1024LL * 1024 * 1024;
    QQuickStyle::setStyle(QStringLiteral("Material"));
    auto service = std::make_unique<CombinedInferenceService>(
        std::make_unique<FakeInferenceService>(QStringLiteral("cuda:0"), timing), std::make_unique<RemoteInferenceService>());
    // Around the chat's own handler of each batch: one connection before the AppContext makes the
    // chat, one after.
    QObject::connect(service.get(), &InferenceService::tokensArrived, [] { g_batches.startCpuMs = GuiThreadClock::cpuMs(); });
    InferenceService *events = service.get();
    auto context = std::make_unique<AppContext>(appOptions, std::move(service),
                                                std::make_unique<FakeVramPlanner>(24 * kGiB, 936e9), true);
    QObject::connect(events, &InferenceService::tokensArrived,
                     [] { g_batches.cpuMs.push_back(GuiThreadClock::cpuMs() - g_batches.startCpuMs); });
    if (!context->storageError().isEmpty())
        return fail(QStringLiteral("the app could not open its chats: %1").arg(context->storageError()));

    QQmlApplicationEngine engine;
    QQuickWindow *window = loadMainWindow(engine, *context);
    if (!window)
        return fail(QStringLiteral("Main.qml did not load"));
    const QThread *guiThread = QThread::currentThread();
    double syncStartCpuMs = -1;
    QObject::connect(window, &QQuickWindow::beforeSynchronizing, window, [&] {
        if (QThread::currentThread() == guiThread)
            syncStartCpuMs = GuiThreadClock::cpuMs();
    }, Qt::DirectConnection);
    QObject::connect(window, &QQuickWindow::frameSwapped, window, [&] {
        ++g_frames;
        if (QThread::currentThread() != guiThread) {
            g_renderThreadSeen = true;
        } else if (syncStartCpuMs >= 0) {
            g_sceneGraphCpuMs += GuiThreadClock::cpuMs() - syncStartCpuMs;
            syncStartCpuMs = -1;
        }
    }, Qt::DirectConnection);

    // Load the simulated model, open the saved conversation in the chat page.
    {
        QEventLoop loop;
        QObject::connect(context->models(), &ModelManager::loadedModelChanged, &loop, &QEventLoop::quit);
        QTimer::singleShot(10000, &loop, &QEventLoop::quit);
        context->models()->load();
        loop.exec();
    }
    if (context->models()->loadedModelName().isEmpty())
        return fail(QStringLiteral("the simulated model did not load: %1").arg(context->models()->loadError()));
    SamplingSettings sampling = context->settings()->sampling();
    sampling.maxNewTokens = replyTokens;
    context->chat()->setSampling(sampling);
    context->conversations()->refresh();
    context->chat()->openConversation(conversationId);
    waitMs(1000);
    const auto [list, bubbles] = messageList(window, context->chat());
    if (!list || context->chat()->rowCount() != options.messages)
        return fail(QStringLiteral("the chat page does not show the conversation (%1 of %2 messages)")
                        .arg(context->chat()->rowCount())
                        .arg(options.messages));

    const double timeout = options.seconds * 10 + 60;  // generous: a GUI that falls behind still finishes
    const QString loadBefore = loadAverage();
    const GuiThreadClock clock;
    LatenessProbe probe(clock);
    std::vector<RunResult> runs;
    runs.push_back(runIdle(clock, probe));
    std::optional<RunResult> streaming = runStreaming(*context, clock, &probe, false, timeout, &error);
    if (!streaming)
        return fail(error);
    runs.push_back(*streaming);
    if (!options.screenshotPath.isEmpty() && !window->grabWindow().save(options.screenshotPath))
        return fail(QStringLiteral("could not write the screenshot %1").arg(options.screenshotPath));
    std::optional<RunResult> plain = runStreaming(*context, clock, nullptr, true, timeout, &error);
    if (!plain)
        return fail(error);
    runs.push_back(*plain);

    const RunResult &idle = runs[0];
    const RunResult &timed = runs[1];
    const RunResult &untimed = runs[2];
    const double p50 = timed.percentile(0.50), p99 = timed.percentile(0.99), worst = timed.percentile(1.0);
    const bool passP99 = p99 <= kTargetP99Ms, passMax = worst <= kTargetMaxMs;
    const bool passBusy = untimed.busyFraction() < kTargetBusy;

    std::printf("GUI responsiveness: %d saved messages (%d bubbles instantiated), %.0f tokens/s for %.0f s, "
                "platform %s, %s scene graph, %s render loop, load average %s before, %s after\n",
                options.messages, bubbles, options.rate, options.seconds, qPrintable(QGuiApplication::platformName()),
                qPrintable(graphicsApiName(window)), g_renderThreadSeen ? "threaded" : "GUI-thread",
                qPrintable(loadBefore), qPrintable(loadAverage()));
    std::printf("%-22s %6s %8s %8s %8s %8s %8s %8s %7s %7s %7s %6s\n", "run", "wall s", "tokens/s", "frames/s",
                "GUI busy", "no SG", "GUI wait", "proc CPU", "p50 ms", "p99 ms", "max ms", "late");
    for (const RunResult &r : runs) {
        const double seconds = r.busy.wallMs / 1000;
        std::printf("%-22s %6.2f %8.0f %8.1f %7.1f%% %7.1f%% %7.1f%% %7.1f%% %7s %7s %7s %6s\n", qPrintable(r.name),
                    seconds, r.tokens / seconds, r.busy.frames / seconds, 100 * r.busyFraction(),
                    100 * r.busyFractionWithoutSceneGraph(), 100 * r.busy.waitMs / r.busy.wallMs,
                    100 * r.busy.processCpuMs / r.busy.wallMs,
                    qPrintable(formatMs(r.percentile(0.5))), qPrintable(formatMs(r.percentile(0.99))),
                    qPrintable(formatMs(r.percentile(1.0))),
                    r.latenessMs.empty() ? "-" : qPrintable(QString::number(r.lateTicks())));
    }
    std::printf("(GUI busy: GUI-thread CPU time over wall time; no SG: the same without the scene graph's sync and "
                "render steps, where they run on the GUI thread; GUI wait: runnable, but no CPU free; late: ticks "
                "late by more than %.0f ms)\n",
                kTargetP99Ms);
    const std::vector<double> &batches = untimed.batchCpuMs;
    std::printf("token batches (no timer run): %zu, GUI-thread CPU per batch delivered: mean %.2f ms, p99 %.2f ms, "
                "max %.2f ms\n",
                batches.size(), batches.empty() ? 0.0 : std::accumulate(batches.begin(), batches.end(), 0.0) / batches.size(),
                nearestRank(batches, 0.99), nearestRank(batches, 1.0));
    Span late;
    for (const LateTick &tick : timed.late)
        late += tick.span;
    if (late.wallMs > 0) {
        const auto share = [](double part, const Span &of) { return 100 * part / of.wallMs; };
        std::printf("ticks late by more than %.0f ms: %d, %.0f ms in all: GUI thread running %.0f%%, waiting for a CPU "
                    "%.0f%%, neither (blocked, e.g. on the render thread) %.0f%%\n",
                    kTargetP99Ms, timed.lateTicks(), late.wallMs, share(late.cpuMs, late), share(late.waitMs, late),
                    share(late.wallMs - late.cpuMs - late.waitMs, late));
        std::vector<LateTick> worst = timed.late;
        std::sort(worst.begin(), worst.end(), [](const LateTick &a, const LateTick &b) { return a.span.wallMs > b.span.wallMs; });
        for (size_t i = 0; i < std::min<size_t>(worst.size(), 3); ++i) {
            const Span &t = worst[i].span;
            std::printf("  %.1f ms late at %.2f s: running %.0f%%, waiting %.0f%%, blocked %.0f%%\n", t.wallMs - 1.0,
                        worst[i].atSeconds, share(t.cpuMs, t), share(t.waitMs, t), share(t.wallMs - t.cpuMs - t.waitMs, t));
        }
    }
    std::printf("targets: timer lateness p99 %.2f ms <= %.0f ms: %s; max %.2f ms <= %.0f ms: %s; "
                "GUI busy (no timer) %.1f%% < %.0f%%: %s\n",
                p99, kTargetP99Ms, passP99 ? "pass" : "FAIL", worst, kTargetMaxMs, passMax ? "pass" : "FAIL",
                100 * untimed.busyFraction(), 100 * kTargetBusy, passBusy ? "pass" : "FAIL");

    const auto rate = [](const RunResult &r, double count) { return r.busy.wallMs > 0 ? count * 1000 / r.busy.wallMs : 0; };
    const QJsonObject json{
        {QStringLiteral("bench"), QStringLiteral("gui_responsiveness")},
        {QStringLiteral("platform"), QGuiApplication::platformName()},
        {QStringLiteral("graphics_api"), graphicsApiName(window)},
        {QStringLiteral("render_thread"), bool(g_renderThreadSeen)},
        {QStringLiteral("load_average"), loadBefore},
        {QStringLiteral("messages"), options.messages},
        {QStringLiteral("bubbles"), bubbles},
        {QStringLiteral("rate"), options.rate},
        {QStringLiteral("seconds"), options.seconds},
        {QStringLiteral("streamed_tokens"), timed.tokens},
        {QStringLiteral("streamed_tokens_per_s"), rate(timed, timed.tokens)},
        {QStringLiteral("frames_per_s"), rate(timed, timed.busy.frames)},
        {QStringLiteral("lateness_p50_ms"), p50},
        {QStringLiteral("lateness_p99_ms"), p99},
        {QStringLiteral("lateness_max_ms"), worst},
        {QStringLiteral("timer_ticks"), int(timed.latenessMs.size())},
        {QStringLiteral("late_ticks"), timed.lateTicks()},
        {QStringLiteral("busy_idle_timer_only"), idle.busyFraction()},
        {QStringLiteral("busy_streaming_with_timer"), timed.busyFraction()},
        {QStringLiteral("busy_streaming_no_timer"), untimed.busyFraction()},
        {QStringLiteral("busy_without_scene_graph_no_timer"), untimed.busyFractionWithoutSceneGraph()},
        {QStringLiteral("gui_wait_streaming_no_timer"), untimed.busy.waitMs / untimed.busy.wallMs},
        {QStringLiteral("pass_p99"), passP99},
        {QStringLiteral("pass_max"), passMax},
        {QStringLiteral("pass_busy"), passBusy},
    };
    std::printf("%s\n", QJsonDocument(json).toJson(QJsonDocument::Compact).constData());
    return 0;
}
