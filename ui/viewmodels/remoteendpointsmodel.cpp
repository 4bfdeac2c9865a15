#include "remoteendpointsmodel.h"

#include "services/remoteinferenceservice.h"

RemoteEndpointsModel::RemoteEndpointsModel(RemoteInferenceService *service, QString storePath, QObject *parent)
    : QAbstractListModel(parent)
    , m_service(service)
    , m_store(std::move(storePath))
    , m_endpoints(m_store.load())
{
    connect(service, &InferenceService::availableModelsChanged, this, &RemoteEndpointsModel::listErrorChanged);
    if (!m_endpoints.isEmpty())
        service->setEndpoints(m_endpoints);
}

int RemoteEndpointsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_endpoints.size());
}

QVariant RemoteEndpointsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const RemoteEndpoint &e = m_endpoints.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
    case NameRole: return e.name;
    case UrlRole: return e.baseUrl.toString();
    case NoteRole: return RemoteEndpointRules::noteFor(e.baseUrl);
    case HasKeyRole: return !e.apiKey.isEmpty();
    default: return {};
    }
}

QHash<int, QByteArray> RemoteEndpointsModel::roleNames() const
{
    return {{NameRole, "name"}, {UrlRole, "url"}, {NoteRole, "note"}, {HasKeyRole, "hasKey"}};
}

QString RemoteEndpointsModel::refusal(int row, const QString &name, const EndpointAddress &address) const
{
    if (name.isEmpty())
        return tr("Give the endpoint a name.");
    for (int i = 0; i < m_endpoints.size(); ++i) {
        if (i != row && m_endpoints.at(i).name == name)
            return tr("An endpoint named %1 exists already.").arg(name);
    }
    return address.error;
}

QString RemoteEndpointsModel::add(const QString &name, const QString &url, const QString &apiKey)
{
    const QString trimmedName = name.trimmed();
    const EndpointAddress address = RemoteEndpointRules::check(url);
    if (const QString why = refusal(-1, trimmedName, address); !why.isEmpty())
        return why;
    beginInsertRows({}, int(m_endpoints.size()), int(m_endpoints.size()));
    m_endpoints.append({trimmedName, address.baseUrl, apiKey.trimmed()});
    endInsertRows();
    if (!saveAndApply())
        return tr("The endpoint is used but could not be saved: %1").arg(m_store.lastError());
    return {};
}

QString RemoteEndpointsModel::update(int row, const QString &name, const QString &url, const QString &apiKey, bool clearKey)
{
    if (row < 0 || row >= m_endpoints.size())
        return tr("This endpoint no longer exists.");
    const QString trimmedName = name.trimmed();
    const EndpointAddress address = RemoteEndpointRules::check(url);
    if (const QString why = refusal(row, trimmedName, address); !why.isEmpty())
        return why;
    RemoteEndpoint &e = m_endpoints[row];
    e.name = trimmedName;
    e.baseUrl = address.baseUrl;
    if (clearKey)
        e.apiKey.clear();
    else if (!apiKey.trimmed().isEmpty())
        e.apiKey = apiKey.trimmed();
    Q_EMIT dataChanged(index(row), index(row));
    if (!saveAndApply())
        return tr("The endpoint is used but could not be saved: %1").arg(m_store.lastError());
    return {};
}

void RemoteEndpointsModel::remove(int row)
{
    if (row < 0 || row >= m_endpoints.size())
        return;
    beginRemoveRows({}, row, row);
    m_endpoints.removeAt(row);
    endRemoveRows();
    saveAndApply();
}

QString RemoteEndpointsModel::check(const QString &url) const
{
    const EndpointAddress address = RemoteEndpointRules::check(url);
    return address.error.isEmpty() ? address.note : address.error;
}

QString RemoteEndpointsModel::listError() const
{
    return m_service ? m_service->listError() : QString();
}

bool RemoteEndpointsModel::saveAndApply()
{
    if (m_service)
        m_service->setEndpoints(m_endpoints);
    return m_store.save(m_endpoints);
}
