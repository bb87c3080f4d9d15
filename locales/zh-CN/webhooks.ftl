webhook-intro = 每个变更事件都会以 JSON 形式 POST 到你的接收地址，并用该地址的密钥签名，签名在请求头
webhook-intro-verify = 中。发送失败会在三天内重试；连续失败一整天或连续失败 20 次的地址会被暂停。
webhook-copy-secret = 请立即复制此签名密钥。
webhook-secret-once = 它只显示这一次。你的接收端用它校验每个请求的签名。
webhook-add = 添加接收地址
webhook-url = 地址
webhook-url-hint = 公网的 http:// 或 https:// 地址。本机或内网地址会被拒绝。
webhook-url-hint-private-allowed = http:// 或 https:// 地址。本服务器也接受本机和内网地址。
webhook-events = 事件
webhook-family = { $family ->
    [stock] 所有库存变动
    [reservation] 订单占用：占用、确认、释放、超时
    [booking] 预约：预约、取消、到店、爽约
    [sku] 商品规格变为可售或不可售，附原因
    [slot] 时段创建、关闭、开放、容量变更、移除
    [closure] 停业的创建与恢复
    [code_batch] 券码导入完成、部分成功、失败
    [code] 券码状态变化（绝不含券码本身）
    [reconcile] 告警：对账冻结或解冻了商品或时段、Redis 偏差
    [exception] 告警：已付款却未占到货，及其处理
    [gate] 告警：Redis 闸门停用超过一分钟，及其恢复
    [webhook] 告警：接收地址因连续发送失败被暂停
   *[other] { $family }
}
webhook-other-types = 其他类型（用逗号分隔；* 表示全部）
webhook-create = 添加
webhook-endpoints = 接收地址
webhook-none = 还没有 Webhook。在上方添加接收地址，变更就会发送到你的系统。
webhook-status = 状态
webhook-state = { $state ->
    [ACTIVE] 启用中
    [PAUSED] 已暂停
   *[other] { $state }
}
webhook-paused-why = { $why ->
    [failing] 连续失败一天
    [manual] 手动暂停
    [breaker] 连续多次失败
   *[other] { $why }
}
webhook-open-log = 发送记录
webhook-failing-title = Webhook { $url } 已被暂停：它的发送连续失败了一整天。
webhook-failing-explain = 自 { $since } 起每次发送都失败了。事件会继续排队；修好接收端后恢复它，排队的事件就会发出。
webhook-failing-open = 查看发送记录
webhook-breaker-title = Webhook { $url } 已被暂停：最近 { $n } 次发送全部失败（超时或出错）。
webhook-breaker-explain = 暂停它是为了不再拖慢其他发送。事件会继续排队；修好接收端后恢复它，排队的事件就会发出。
webhook-old-secret = 旧密钥
webhook-old-secret-until = 仍有效至 { $until }
webhook-pause = 暂停
webhook-resume = 恢复
webhook-delete = 删除
webhook-rotate = 更换密钥
webhook-overlap = 旧密钥继续签名的时长（小时）
webhook-rotate-button = 更换
webhook-rotate-explain = 重叠期内每个请求带两个签名（每个密钥一个），接收端可以从容切换到新密钥，不会拒收任何请求。
webhook-log = 发送记录
webhook-all = 全部
webhook-filter = 筛选
webhook-delivery-state = { $state ->
    [PENDING] 待发送
    [DELIVERED] 已送达
    [FAILED] 已放弃
   *[other] { $state }
}
webhook-no-deliveries = 还没有发送过。从现在起提交的事件会显示在这里。
webhook-event = 事件
webhook-attempts = 尝试次数
webhook-last-attempt = 最近一次尝试
webhook-answer = 响应
webhook-next-attempt = 下次重试 { $at }
webhook-not-yet = 尚未发送
webhook-latency = { $ms } 毫秒
webhook-error = { $code ->
    [status] 对方返回了错误
    [redirect] 重定向（不会跟随）
    [timeout] 超时
    [connect] 无法连接
    [unresolvable] 域名无法解析
    [private_address] 已拒绝：不是公网地址
    [event_missing] 该事件已不存在
   *[other] 请求失败
}
webhook-first-bytes = 响应的开头部分
webhook-redeliver = 重新发送
webhook-newest = 最新
webhook-older = 更早
webhook-delete-question = 删除这个 Webhook？
webhook-delete-explain = 删除后不会再向它发送任何事件（包括仍在等待重试的事件），也不再显示它的发送记录。谁创建、修改和删除了它，仍记录在审计日志中。此操作无法撤销。
webhook-delete-confirm = 删除 Webhook
webhook-keep = 保留
webhook-url-example = https://orders.example.com/hooks/sellable
webhook-other-example = booking.cancelled, slot.closed
webhook-http-status = HTTP { $code }
webhook-no-deliveries-filtered = 没有这个状态的发送记录。
webhook-waits-for-resume = 等待恢复后发送
