#include "aboutinfo.h"

#include <QClipboard>
#include <QGuiApplication>

#include "exl/version.h"

namespace {
QString q(const std::string &s) { return QString::fromStdString(s); }
}  // namespace

AboutInfo::AboutInfo(QObject *parent)
    : QObject(parent)
{
    const exl::BuildInfo &b = exl::build_info();
    m_version = q(b.version);
    m_gitCommit = q(b.git_commit);
    m_buildType = q(b.build_type);
    m_cudaArchitectures = q(b.cuda_architectures);
    m_cudaToolkit = q(b.cuda_toolkit);
    const exl::CudaRuntimeInfo c = exl::cuda_runtime_info();
    m_cudaBuilt = c.built;
    m_cudaUsable = c.usable;
    m_cudaStatus = q(c.status);
    m_driverVersion = q(c.driver_version);
    m_driverCuda = q(c.driver_cuda);
    m_cublasVersion = q(c.cublas_version);
    m_cublasPath = q(c.cublas_path);
    for (const std::string &d : c.devices)
        m_devices.append(q(d));
    m_report = q(exl::version_report("exl-studio")) + QStringLiteral("Qt:                  %1\n").arg(qtVersion());
}

QString AboutInfo::qtVersion() const
{
    return QString::fromLatin1(qVersion());
}

void AboutInfo::copyReport() const
{
    if (QClipboard *clipboard = QGuiApplication::clipboard())
        clipboard->setText(m_report);
}
