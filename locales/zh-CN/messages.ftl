# 由代码选择的句子（src/messages.rs）：表单错误、拒绝原因、不可售原因、操作提示。
# 变量名与 Rust 参数同名。

m-required = { $field }为必填项。
m-too-long = { $field }过长：最多 { $max } 个字符。
m-bad-slug = { $field }只能包含小写字母、数字和连字符。
m-bad-code = SKU 编码只能包含字母、数字以及 '-'、'_'、'.'。
m-bad-email = 请输入有效的邮箱地址，例如 name@example.com。
m-public-not-found = { $thing ->
    [store] 此地址没有预约页面，请核对门店提供的链接。
    [booking] 没有此预约号的预约，请核对确认信息中的预约号。
    [slot] 此时段不提供预约，请在门店页面选择其他时间。
   *[other] 此地址没有页面。
}
m-bad-language = 请选择简体中文或 English。
m-bad-text = { $field }不能包含控制字符。
m-storefront-saved = 已保存，预约页面即刻显示。
m-bad-price = 价格须为最多两位小数的数字，例如 12.50。
m-negative-price = 价格不能为负数。
m-price-too-large = 价格不能超过 { $max }。
m-bad-time = { $field }须为日期和时间，例如 2026-12-01T09:00。
m-sale-window-order = 销售结束时间须晚于开始时间。
m-bad-time-or-date = { $field }须为日期（2026-12-01）或日期和时间（2026-12-01T09:00:00+08:00）。
m-one-cursor = before 与 after 只能给一个。
m-bad-timezone = 未知时区“{ $tz }”：请使用 IANA 名称，例如 Asia/Shanghai。
m-bad-currency = 币种须为三位 ISO 代码，例如 CNY。
m-password-too-short = 密码至少需要 { $min } 个字符。
m-duplicate-sku-code = SKU 编码“{ $code }”已被本商户的其他 SKU 使用。
m-duplicate-sku-in-request = SKU 编码“{ $code }”重复出现。
m-no-skus = 商品至少需要一个 SKU。
m-too-many-skus = 一个商品最多 { $max } 个 SKU。
m-duplicate-slug = 已有短标识为“{ $slug }”的{ $what }。
m-duplicate-email = 邮箱“{ $email }”已被其他用户使用。
m-not-found = 找不到该{ $thing ->
    [api-key] API 密钥
    [sku] SKU
    [batch] 批次
    [booking] 预约
    [closure] 停约
    [code] 券码
    [finding] 异常
    [merchant] 商户
    [order] 订单
    [page] 页面
    [product] 商品
    [reservation] 订单占用
    [run] 对账记录
    [service] 服务
    [slot] 时段
    [staff-member] 员工
    [stock-page] 库存页
    [store] 门店
    [webhook] Webhook
    [delivery] 发送记录
   *[other] { $what }
}。
m-forbidden = 您的角色无权执行此操作。
m-bad-login = 邮箱或密码错误。
m-login-throttled = 登录失败次数过多，请等待 { $minutes } 分钟后再试。
m-reserved-key = 以“{ $prefix }”开头的幂等键保留给公开预约页使用。
m-bad-country = { $code } 不是国家代码：请使用两个字母，例如 CN。
m-busy = 服务器正忙于处理登录，请 { $seconds } 秒后再试。
m-signed-out = 您已退出登录。
m-product-created = 商品“{ $name }”已创建。
m-product-saved = 商品“{ $name }”已保存。
m-status-changed = “{ $name }”{ $status ->
    [ONLINE] 已上架
    [OFFLINE] 已下架
    [DRAFT] 已改为草稿
   *[other] 现在为 { $status }
}。
m-sku-added = SKU { $code } 已添加。
m-sku-saved = SKU { $code } 已保存。
m-key-revoked = API 密钥“{ $name }”已吊销，使用它的系统将无法再调用 API。
m-internal-error = 系统出了点问题，已记录日志，请稍后再试。
m-csrf-rejected = 该请求来自其他网站，已被拒绝。
m-page-not-found = 此地址没有页面。
m-body-too-large = 请求内容超出服务器接受的大小。
m-bad-json = 请求内容不是此接口可接受的 JSON：{ $detail }
m-bad-multipart = 请以 multipart/form-data 上传，券码放在名为 "file" 的部分中。
m-method-not-allowed = 此地址不支持该请求方法。
m-invalid-text = 请求中包含无法保存的字符（例如 NUL 字节或其他控制字符），请删除后重试。
m-text-part-too-long = 表单中的某个文字字段超过 { $kb } KB，请缩短后重试。
m-login-too-fast = 此账号近期密码错误次数较多，每隔几秒才接受一次尝试。请 { $seconds } 秒后重试。
m-password-too-common = 此密码属于最常见的密码，最容易被猜中。请换一个。
m-too-many-waits = 您在本店的候补或预约已达 { $n } 个，这是线上的上限。如需更多，请致电或到店联系。
m-too-many-webhooks = 此商户已有 { $n } 个 Webhook，已达上限。请先删除不再使用的。
m-bad-content-type = 请以 JSON 发送请求内容，并设置 Content-Type: application/json。
m-bad-api-key = 请在 Authorization: Bearer <key> 中提供有效的 API 密钥。
m-nothing-to-change = 没有需要修改的内容：请提供 status、sale_starts_at 或 sale_ends_at。
m-unknown-sku = 此商品目录中没有 SKU“{ $code }”。
m-transfer-same-warehouse = 请调拨到另一个仓库。
m-bad-qty = 数量须为 1 到 { $max } 之间的整数。
m-bad-count = 盘点数量须为 0 到 { $max } 之间的整数。
m-not-enough-frozen = 无法解冻 { $wanted } 件：仅冻结 { $frozen } 件。
m-count-stale = 盘点后库存已变动：当时在库 { $expected }，现在为 { $now }。请核对差异后重新确认。
m-count-below-held = 盘点为 { $counted }，但有 { $locked } 被未付款订单占用、{ $frozen } 被冻结：请先释放或解冻。
m-idempotency-conflict = 幂等键“{ $key }”已用于另一个不同的请求。
m-stock-adjusted = { $kind ->
    [RECEIVE] 已入库 { $qty } 件到{ $warehouse }{ $why }。
    [WRITE_OFF] 已从{ $warehouse }报损 { $qty } 件{ $why }。
    [TRANSFER] 已从{ $warehouse }调拨 { $qty } 件到{ $to }{ $why }。
    [FREEZE] 已在{ $warehouse }冻结 { $qty } 件，暂停销售{ $why }。
    [UNFREEZE] 已在{ $warehouse }解冻 { $qty } 件，恢复可售。
   *[COUNT] { $warehouse }盘点已记录：在库 { $qty } 件{ $why }。
}
m-stock-why = （{ $why }）
m-hold-holds-only = 这笔冻结只有 { $n } 件，最多解冻 { $n } 件。
m-hold-gone = 这笔冻结已被解冻，请从仍在冻结的记录中选择。
m-release-on-in-past = 预计解冻日期不能早于今天。
m-hold-too-small = 这笔冻结不足 { $qty } 件。
m-sku-frozen = { $sku } 已被对账冻结（异常 #{ $finding }），待平台运营核查。
m-slot-frozen = 此时段已被对账冻结（异常 #{ $finding }），待平台运营核查。
m-why-product-draft = 商品为草稿：上架后才能销售。
m-why-product-offline = 商品已下架：上架后才能销售。
m-why-sale-not-started = 将于 { $at_local }（{ $tz }）开售。
m-why-sale-ended = 已于 { $at_local }（{ $tz }）停售。
m-why-no-price = 该 SKU 尚未定价：设置价格（免费填 0）后才能销售。
m-why-sku-frozen = 已被对账冻结（异常 #{ $finding }）：{ $explain }
m-why-no-stock-record = 尚未在任何仓库入库。
m-why-no-schedule = 没有排班：该服务没有营业规则，也没有未来的时段。
m-why-no-slots-in-window = 未来 { $days } 天内没有时段。
m-why-next-slot-beyond-window = 下一个可约时段 { $at_local }（{ $tz }）超出了 { $days } 天的预约范围。
m-why-no-batch = 尚未上传或生成任何券码。
m-why-batch-importing = 批次 { $name } 仍在导入（已完成 { $progress }%）：导入完成后券码才会开售。
m-why-stock-unlimited = 此 SKU 不计库存（无限）：永不售罄，每笔销售仍记入流水。
m-why-gate-degraded = Redis 无响应：本实例仅用数据库作答（较慢，但结果正确）。
m-warn-low-stock = 库存不足：剩余 { $available }（低于 { $threshold } 时提醒）。
m-warn-few-slots = 未来 7 天仅有 { $open } 个尚有名额的时段（低于 { $threshold } 时提醒）。
m-warn-codes-running-out = 剩余 { $available } 个券码：按近期每天 { $per_day } 个的速度，约可维持 { $days_left } 天。
m-bad-whole-number = { $field }须为不小于 1 的整数。
m-not-on-sale = { $sku } 不可售：{ $why }
m-insufficient-stock = { $sku } 库存不足：需要 { $wanted }，单个仓库可售 { $available }。
m-order-conflict = 订单“{ $order_id }”已用不同的商品锁定过。
m-reservation-expired = 订单"{ $order_id }"已过期，不再锁定任何库存。请用新的订单号重新下单。
m-reservation-released = 订单“{ $order_id }”{ $status ->
    [RELEASED] 已释放
    [EXPIRED] 已超时释放
   *[other] 状态为 { $status }
}：其占用已解除，请重新锁定后再销售。
m-bad-payment-ref = payment_ref 最多 { $max } 个可打印字符。
m-payment-conflict = 订单“{ $order_id }”已用支付单 { $payment_ref } 付款；同一订单的另一笔付款需要人工核查。
m-paid-not-in-stock = 订单“{ $order_id }”已付款，但付款时扣减库存的商品已无货。订单已释放，这笔付款已记为异常 #{ $id }，请商家退款或补货后补发。
m-paid-not-held = 订单“{ $order_id }”在付款前已超时，商品无法重新占用。这笔付款已记为异常 #{ $id }，请商家退款或补发。
m-hold-released = 订单“{ $order_id }”的占用已释放，商品重新可售。
m-hold-not-released = 订单“{ $order_id }”已不在占用中（期间已付款或超时），未释放任何东西。
m-exception-settled = 付款 #{ $id } 已处理：{ $how ->
    [refunded] 已退款。
    [fulfilled] 已补发，商品已扣减。
   *[other] { $how }。
}
m-bad-max-places = 每次预约名额上限须为 1（每次预约 1 人）到 { $max } 的整数。
m-services-only-rule = 只有服务可设置预约提前量和改期截止时间。
m-bad-minutes = 分钟数须为 0（直到开始）到 { $max } 之间的整数。
m-too-late-to-book = 该时间即将开始，无法在线预约：请至少提前 { $minutes } 分钟预约，或致电门店。
m-change-closed = 距开始时间太近，无法在线修改此预约：请致电门店。
m-services-only-party = 只有服务可多人预约：每次预约的名额数只能在服务 SKU 上设置。
m-goods-only-policy = 只有实物商品计库存：库存方式和扣减时机只能在实物 SKU 上更改。
m-bad-limit = 限购数量须为 { $min } 到 { $max } 的整数；不限则留空（API 中为 null）。
m-limit-exceeded = { $per ->
    [customer] SKU { $sku } 每位顾客限购 { $limit } 件，该顾客已占用或购买 { $already } 件。
   *[order] SKU { $sku } 每单限购 { $limit } 件。
}
m-bad-customer-id = customer_id 须为 1 到 { $max } 个可打印字符。
m-bad-party-size = { $max ->
    [1] 此服务每次预约只能预约 1 个名额。
   *[other] 每次预约可预约 1 至 { $max } 个名额。
}
m-slot-not-of-sku = 时段 { $slot } 不属于 { $sku }。
m-unknown-slot = 没有时段 { $slot }。
m-code-unknown = 没有匹配的券码：请核对是否与印刷的一致。
m-code-already-redeemed = 此卡券已核销过。
m-code-voided = 此卡券已作废（已退款或已换发），不能使用。
m-code-not-sold = 此卡券未售出（{ $status ->
    [AVAILABLE] 仍在售
    [BOOKING] 被未付款订单占用
    [LOCKED] 已锁定
    [EXPIRED] 已过期
    [INVALID] 已作废
   *[other] { $status }
}），不能使用。
m-bad-exception-status = status 只能是 open 或 resolved。
m-bad-resolution = 请选择处理方式：已退款或已补发。
m-exception-resolved = 异常 #{ $id } 已处理。
m-still-short = 订单“{ $order_id }”仍无法履约：请先补货，或登记退款。
m-order-changed = 订单“{ $order_id }”刚刚有变动，请刷新后再看。
m-reservation-confirmed = 订单“{ $order_id }”已付款（CONFIRMED）：请走退货，而不是释放。
m-duplicate-line = SKU { $sku } 出现在多行中，请合并为一行。
m-too-many-lines = 一个订单最多 { $max } 行。
m-bad-ttl = ttl_seconds 须为 1 到 { $max } 之间的整数。
m-bad-order-id = order_id 须为 1 到 { $max } 个可打印字符。
m-order-not-confirmed = 订单“{ $order_id }”未付款（CONFIRMED）：只有已付款订单才能退货。
m-sku-not-in-order = 订单“{ $order_id }”没有购买 SKU { $sku }。
m-return-exceeds-order = 超出订单购买数量：还可退 { $remaining }。
m-return-conflict = 退货“{ $return_id }”已用不同的信息记录过。
m-duplicate-staff = 本门店已有名为“{ $name }”的员工。
m-bad-clock = { $field }须为时间，例如 09:30。
m-bad-capacity = 名额须为 1 到 { $max } 之间的整数。
m-unknown-store = 没有门店“{ $slug }”。
m-no-store = 该商户还没有门店。
m-store-required = 该商户有多个门店，请指明是哪一个。
m-too-many-rules = 每个服务每个门店最多 { $max } 条排班规则。
m-closes-before-opens = 结束时间须晚于开始时间。
m-bad-slot-length = 时段长度须为 5 到 1440 分钟。
m-bad-weekday = 未知的星期“{ $day }”：请使用 MON、TUE、WED、THU、FRI、SAT 或 SUN。
m-unknown-staff = 本门店没有员工“{ $name }”。
m-removed-from-schedule = 已从排班中移除
m-capacity-below-booked = 名额不能设为 { $capacity }：已有 { $booked } 个名额被预约。
m-ends-before-starts = 结束时间须晚于开始时间。
m-slot-in-past = 时段须在将来开始。
m-slot-too-long = 一个时段最长 24 小时。
m-closure-too-long = 停约最长一年。
m-slot-overlap = { $staff } 在该时间已有时段。
m-slot-exists = 该服务在此时间已有一个时段。
m-bad-phone = 请输入有效的电话号码，例如 138 0013 8000；境外号码请以 + 和国家代码开头，例如 +44 7911 123456。
m-booking-key-conflict = 此幂等键已用于另一个请求（其他时段或顾客）。新预约请使用新的键。
m-too-many-bookings-phone = 此手机号在本店已有 { $limit } 个待到店预约，已达单个顾客上限。请取消一个或致电门店。
m-too-many-bookings-address = 本店已从此网络连接收到 { $limit } 个待到店预约，已达上限。如需更多预约请致电门店。
m-already-booked-public = 此手机号已预约了这个时段，详情请查看您收到的确认链接。
m-form-used = 此预约表单已提交过。请重新打开该时段进行预约。
m-bad-customer-name = 请输入预约人姓名。
m-slot-started = 此时段已开始。
m-slot-full = 此时段已约满。
m-not-enough-places = 此时段只剩 { $remaining } 个名额。
m-already-booked = 您已预约了这个时段：预约号 { $reference }。
m-cancel-after-start = 时段已开始，预约无法再取消。店员会记录为到店或爽约。
m-booking-cancelled = 预约 { $reference } 已取消。
m-overlapping-rule = { $weekday }同一人员的 { $second } 与 { $first } 时间重叠：请调整营业时段使其不重叠。
m-waitlist-slot-closed = 该时段已关闭，不设候补。
m-waitlist-has-room = 还有 { $remaining } 个空位，请直接预约，无需候补。
m-already-waiting = 您已在此时段的候补名单中（第 { $position } 位）。
m-booking-held = 该名额仅为候补顾客保留，顾客尚未接受，不能改期或标记。取消后名额将顺延给下一位。
m-bad-reason-code = 请从列表中选择原因。
m-reason-code-mismatch = “{ $code }”不适用于此类调整，可用的原因代码：{ $fits }。
m-whole-day = { $day }（全天）
m-whole-days = { $from } 至 { $until }（全天）
m-waitlist-offer-ended = 此名额已不再保留：已被接受、已放弃或已超时。
m-waitlist-offer-accepted = 名额归您了：预约成功。
m-bad-waitlist-hold = 请输入 1 到 { $max } 之间的整数分钟；留空则自动为候补顾客预约。
m-booking-rescheduled = 您的预约已改到新时间，预约号不变。
m-closure-in-past = 该时间段已经过去：停业只能关闭尚未到来的时间。
m-move-other-service = 预约只能改到同一门店、同一服务的其他时间或服务人员。
m-booking-not-movable = 该预约已记录为到店或爽约，无法再改期。
m-move-after-start = 该预约的时段已开始，无法再改期。
m-booking-changed = 预约在此期间已被他人改期或取消，请刷新后重试。
m-booking-moved = 预约 { $reference } 已改到 { $when }，预约号不变。
m-slot-not-started = 时段开始后才能记录到店情况。
m-too-many-requests = 您的网络请求过于频繁，请等待一分钟后再试。
m-booking-confirmed = 预约成功，您的预约号是 { $reference }。
m-booking-cancelled-by-customer = 您的预约已取消，名额已释放给其他顾客。
m-code-move-refused = 无法对状态为“{ $status }”的券码执行{ $action ->
    [lock] 锁定
    [unlock] 解锁
    [invalidate] 作废
   *[other] { $action }
}。
m-code-not-returnable = SKU { $code } 以券码销售，已售券码不会再次上架：请作废（退款），或换发一个新的给该订单。
m-import-abandoned = 导入在完成前中断（服务器已重启），其中的券码均未上架，请重新上传文件。
m-import-empty = 文件中没有券码。
m-import-nothing-valid = 文件中没有一行是有效的新券码：请查看下方的错误。
m-import-all-or-nothing = 全部或全不：有 { $rejected } 行被拒绝，因此未导入任何券码。
m-already-downloaded = 此批次已下载过。可在批次页面逐个查看券码。
m-bad-import-mode = 未知的导入模式“{ $mode }”：请使用 "valid"（导入有效行）或 "all"（全部或全不）。
m-line-invalid-characters = 含有无效字符
m-line-too-long = { $chars } 个字符，上限为 { $limit }
m-line-too-long-unread = 超过 { $cap } 字节，上限为 128 个字符
m-line-not-utf8 = 不是有效的 UTF-8 文本（请将文件另存为 UTF-8）
m-line-empty = 空行
m-line-bad-expiry = expires_at 须为日期（如 2027-01-31）或时间（如 2027-01-31T23:59:00Z）
m-line-expired = 已过期
m-line-not-allowed = 第 { $at } 个字符不符合本批次的规则（{ $rule }）
m-allowed-rule = { $rule ->
    [alnum] 仅限字母和数字
    [alnum_dash] 仅限字母、数字和连字符
    [upper_alnum] 仅限大写字母和数字
    [digits] 仅限数字
   *[any] 任意字符
}
m-bad-allowed = 未知的字符规则“{ $value }”：请使用 any、alnum、alnum_dash、upper_alnum 或 digits。
m-line-bad-csv = 不是有效的 CSV 行
m-csv-needs-code-column = CSV 文件需要包含 "code" 列的表头行。
m-line-duplicate = 与第 { $first } 行重复
m-line-already-imported = 已在批次 #{ $batch } 中导入
m-upload-too-large = 文件超过 { $mb } MB，请拆分为更小的文件。
m-upload-too-many-lines = 文件超过 { $max } 行，请拆分为更小的文件。
m-upload-broken = 上传未完整到达：{ $detail }
m-upload-missing-file = 请选择要上传的文件。
m-bad-generate-count = 请生成 1 到 { $max } 个券码。
m-bad-code-length = 券码长度须为 { $min } 到 { $max } 个字符。
m-batch-started = 批次 #{ $id } 正在导入。
m-codes-moved = { $n } 个券码：{ $action ->
    [lock] 锁定
    [unlock] 解锁
    [invalidate] 作废
   *[other] { $action }
}已完成。
m-upload-not-multipart = 请以 multipart/form-data 提交上传表单，并附上文件。
m-generated-batch-name = 生成的 { $count } 个券码
m-lookup-code-required = 请输入顾客报出的券码。
m-warehouse-not-applicable = SKU { $code } 以券码销售：无需填写仓库。
m-code-keys-created = 已在 { $file } 创建存储券码用的新密钥。请备份此文件：没有它，已存储的券码将无法读取。
m-slot-capacity-saved = 名额已设为 { $capacity }。
m-slot-reopened = 时段已重新开放：空余名额可再次预约。
m-booking-cancelled-by-staff = 预约 { $reference } 已取消，名额已释放。
m-closure-reopened = 停约已结束：其时段重新开放（除非另有停约覆盖）。
m-staff-added = 已添加员工 { $name }。
m-fixed-by = { $who ->
    [operator] 只有运营人员可以处理。
    [store] { $merchant } 的门店员工或管理员可以修改。
   *[admin] 只有{ $merchant }的管理员可以修改。
}
m-drift-repaired = 已自动修复：Redis 已按 SQL 重建。
m-count-repaired = 已自动修复：按券码重新计数。
m-holds-repaired = 已自动修复：列出的冻结记录已与冻结数量一致。
m-accept-needs-locked = 未完成订单占用 { $held } 件，但余额锁定了 { $locked } 件：接受会保留这个错误，请改为恢复余额。
m-correction-impossible = 此更正会导致不可能的余额（{ $target }）。请先调整库存，再更正。
m-unexplained-change = 未经流水的变动，由对账发现（异常 #{ $finding }）
m-finding-not-correctable = 此异常不能以这种方式更正（或已处理）。
m-identity-still-broken = 仍不一致：预期 { $expected }，实际 { $found }。请先更正再解冻。
m-reconcile-run-failed = 对账 #{ $run } 失败：{ $error }
m-finding-stock-restored = 余额已按流水和未完成订单恢复（异常 #{ $finding }）。该 SKU 在您解冻前保持冻结。
m-finding-stock-accepted = 已按现状接受余额，差额已记入流水（异常 #{ $finding }）。该 SKU 在您解冻前保持冻结。
m-finding-slot-corrected = 已预约数已设为有效预约数（异常 #{ $finding }）。该时段在您解冻前保持冻结。

## 由代码在多种说法中选择（src/messages.rs）
m-bad-choice = { $field }须为以下之一：{ $allowed }。
m-role-scope-operator = 平台运营不属于任何商户或门店。
m-role-scope-merchant-admin = 商户管理员需要指定商户，且不属于门店。
m-role-scope-store-staff = 门店员工需要指定商户及其一个门店。
m-wrong-unit-stock-code = SKU { $code } 是券类：以券码销售，不按库存计。
m-wrong-unit-stock-slot = SKU { $code } 是服务：按时段预约，不按库存计。
m-wrong-unit-stock-stock = SKU { $code } 不按库存计。
m-wrong-unit-slot-code = SKU { $code } 是券类：以券码销售，不按时段预约。
m-wrong-unit-slot-stock = SKU { $code } 是实物：按库存计，不按时段预约。
m-wrong-unit-slot-slot = SKU { $code } 不是服务。
m-wrong-unit-code-stock = SKU { $code } 是实物：按库存计，不以券码销售。
m-wrong-unit-code-slot = SKU { $code } 是服务：按时段预约，不以券码销售。
m-wrong-unit-code-code = SKU { $code } 不以券码销售。
m-choose-warehouse = 请选择仓库。
m-unknown-warehouse = 没有仓库“{ $slug }”。
m-not-enough-available = 无法{ $kind ->
    [WRITE_OFF] 报损
    [FREEZE] 冻结
    [TRANSFER] 调拨
   *[other] 出库
} { $wanted }：可售仅 { $available }。
m-quantity-service = 下一个时段剩余 { $n } 个名额，{ $at }（{ $tz }）
m-quantity-voucher = 剩余券码 { $n } 个
m-quantity-unlimited = 不限量
m-quantity-goods = 剩余 { $n } 件
m-list-sep = {"、"}
m-clause-sep = {"；"}
m-sentence = { $text }。
m-oos-locked = { $n } 被未付款订单占用
m-oos-frozen-because = { $n } 已冻结（{ $reason }）
m-oos-frozen = { $n } 已冻结
m-oos-sold = { $n } 已售
m-oos-none = 总库存 { $total }，无可售。
m-oos = 总库存 { $total }，无可售：{ $parts }。
m-closure-item-staff-period = { $reason }（{ $staff }，{ $period }）
m-closure-item-staff = { $reason }（{ $staff }）
m-closure-item-period = { $reason }（{ $period }）
m-why-all-slots-closed = 未来 { $days } 天内的 { $n } 个时段全部停约：{ $why }。
m-why-all-slots-full = 未来 { $days } 天内开放的 { $full } 个时段已全部约满{ $closed ->
    [0] 。
   *[other] （另有 { $closed } 个已停约）。
}
m-why-slots-frozen = { $n } 个尚有名额的开放时段已被对账冻结（异常 { $ids }），待平台运营核查。
m-error-line = 第 { $line } 行：{ $reason }
m-with-first-errors = { $text }。前几个错误：{ $errors }
m-batch-failed = 最近的批次 { $name } 导入失败
m-batch-failed-because = 最近的批次 { $name } 导入失败：{ $failure }
m-batch-partial = 最近的批次 { $name } 部分导入：{ $rejected } 行被拒绝
m-codes-by-status = { $n } 个{ $status ->
    [AVAILABLE] 可用但已过期
    [BOOKING] 被未付款订单占用
    [SOLD] 已售
    [LOCKED] 已锁定
    [EXPIRED] 已过期
    [INVALID] 已作废
    [VOIDED] 售后作废
    [REDEEMED] 已核销
    [PENDING] 仍在导入
   *[other] 其他
}
m-no-codes = 没有可售券码。
m-no-codes-because = 没有可售券码：{ $parts }。
m-slot-not-available = 此时间暂不可约。
m-slot-not-available-note = 此时间暂不可约：{ $note }
m-slot-closed = 此时段已停约。
m-slot-closed-because = 此时段已停约：{ $reason }。
m-batch-moved-lock = { $n ->
    [0] 此批次没有 AVAILABLE 状态的券码：未锁定任何券码。
   *[other] 已锁定 { $n } 个券码：解锁前不会售出。
}
m-batch-moved-unlock = { $n ->
    [0] 此批次没有 LOCKED 状态的券码：未解锁任何券码。
   *[other] 已解锁 { $n } 个券码：重新开售。
}
m-batch-moved-invalidate = { $n ->
    [0] 此批次没有 AVAILABLE 状态的券码：未作废任何券码。
   *[other] 已作废 { $n } 个券码：永远不会售出。
}
m-code-moved-lock = 券码 #{ $id } 已锁定：解锁前不会售出。
m-code-moved-unlock = 券码 #{ $id } 已解锁：重新开售。
m-code-moved-invalidate = 券码 #{ $id } 已作废：永远不会售出。
m-code-moved-other = 券码 #{ $id }：{ $action ->
    [lock] 锁定
    [unlock] 解锁
    [invalidate] 作废
   *[other] { $action }
}已完成。
m-slot-closed-by-staff = { $n ->
    [0] 时段已停约，没有人预约。
   *[other] 时段已停约，有 { $n } 位顾客已预约：请致电通知（见下方名单）。
}
m-booking-marked = { $status ->
    [ATTENDED] 预约 { $reference } 已记为到店。
    [NO_SHOW] 预约 { $reference } 已记为爽约。
    [BOOKED] 预约 { $reference } 已恢复为已预约。
    [CANCELLED] 预约 { $reference } 已取消。
   *[other] 预约 { $reference } 现在为 { $status }。
}
m-booking-not-active = { $status ->
    [CANCELLED] 预约 { $reference } 已取消过。
    [ATTENDED] 预约 { $reference } 已到店：无法再取消。
    [NO_SHOW] 预约 { $reference } 已记为爽约：无法再取消。
   *[other] 预约 { $reference } 状态为 { $status }：无法再取消。
}
m-closure-created = 已停约 { $slots } 个时段。{ $contact ->
    [0] 没有人预约。
   *[other] 有 { $contact } 个预约需要致电通知：见下方。
}
m-closure-bookings-cancelled = { $n ->
    [0] 没有需要取消的预约。
   *[other] 已取消 { $n } 个预约，名额已释放。
}
m-finding = { $what }（{ $subject }）：预期 { $expected }，实际 { $found }。
m-reconcile-run-done = 对账 #{ $run } 检查了 { $checked } 个余额、时段和订单行：{ $broken ->
    [0] 没有不一致
   *[other] { $broken } 处不一致（已冻结，见下方）
}，{ $repaired ->
    [0] 无需修复 Redis
   *[other] 修复了 { $repaired } 个 Redis 键
}。
m-finding-resolved = 异常 #{ $finding } 已处理。
m-finding-unfrozen-still = 异常 #{ $finding } 已处理。{ $what ->
    [slot] 该时段
   *[sku] 该 SKU
}仍冻结：异常 #{ $other } 尚未处理。
m-finding-unfrozen = 异常 #{ $finding } 已处理。{ $what ->
    [slot] 该时段
   *[sku] 该 SKU
}已恢复可售。

## 为何不可售：原因标题与修复入口
reason-product_draft = 商品为草稿
reason-product_offline = 商品已下架
reason-sale_not_started = 尚未开售
reason-sale_ended = 已停售
reason-no_price = 未设价格
reason-sku_frozen = 已被对账冻结
reason-no_stock_record = 从未入库
reason-out_of_stock = 无库存
reason-no_schedule = 没有排班
reason-no_slots_in_window = 预约范围内没有时段
reason-all_slots_closed = 时段全部停约
reason-all_slots_full = 开放时段全部约满
reason-slots_frozen = 时段已被对账冻结
reason-next_slot_beyond_window = 下一个时段超出预约范围
reason-no_batch = 还没有券码
reason-batch_failed = 最近的批次导入失败
reason-batch_partial = 最近的批次部分导入
reason-batch_importing = 批次仍在导入
reason-no_codes_available = 没有可售券码
reason-stock_unlimited = 不计库存
reason-gate_degraded = Redis 降级
reason-low_stock = 库存不足
reason-few_slots = 本周可约时段少
reason-codes_running_out = 券码即将用完
fix-product = 打开商品
fix-price = 设置价格
fix-finding = 查看异常
fix-stock = 打开库存
fix-schedule = 打开排班
fix-closures = 查看停约原因
fix-week = 打开本周
fix-codes = 打开券码
fix-batch = 打开批次
fix-open = 打开

## 对账异常的含义
finding-locked_mismatch = 余额锁定的数量与未完成订单占用的数量不一致
finding-ledger_mismatch = 余额在流水之外被修改：按流水重放得到的余额不同
finding-booked_mismatch = 时段的已预约数与有效预约数不一致
finding-overbooked = 时段的预约数超过了名额
finding-code_booking_without_reservation = 券码处于占用（BOOKING）状态，但没有未完成订单占用它
finding-code_sold_without_order = 券码已售（SOLD），但没有已付款订单包含它
finding-order_booking_mismatch = 订单的预约与订单不符：已释放或超时的订单仍占着名额，或占用中的订单缺少它预约的名额
finding-code_line_mismatch = 订单行占用的券码数量与其数量不符
finding-redis_drift = Redis 与 SQL 不一致，已按 SQL 修复
finding-code_count_drift = 批次某状态的券码计数与券码本身不符，已重新计数
finding-hold_drift = SKU 页面列出的冻结记录与冻结数量不符

## 字段名称：用于提示和表单
field-name = 名称
field-kind = 类型
field-status = 状态
field-code = SKU 编码
field-sku_name = SKU 名称
field-price = 价格
field-sale_starts_at = 开售时间
field-sale_ends_at = 停售时间
field-slug = 短标识
field-email = 邮箱
field-role = 角色
field-timezone = 时区
field-currency = 币种
field-password = 密码
field-merchant = 商户
field-store = 门店
field-priority = 优先级
field-qty = 数量
field-date = 日期
field-note = 备注
field-release_on = 预计解冻日期
field-reason = 原因
field-warehouse = 仓库
field-to_warehouse = 目标仓库
field-idempotency_key = 幂等键
field-order_id = 订单号
field-return_id = 退货单号
field-phone = 手机号
field-customer_name = 姓名
field-places = 人数
field-uses = 可用次数
field-slot_id = 时段
field-capacity = 名额
field-starts_at = 开始时间
field-ends_at = 结束时间
field-opens = 开始营业
field-closes = 结束营业
field-expires_at = 过期时间
field-address = 地址
field-description = 简介
field-language = 语言
field-stock_policy = 库存方式
field-deduct = 扣减时机
field-url = 地址
field-events = 事件
field-other = 此字段

## 对账异常的应为值与实际值（messages::finding_value）：对账以固定的英文格式存储，各语言按自己的说法显示。
m-value-buckets = 总数 { $total }，锁定 { $locked }，已售 { $sold }，冻结 { $frozen }
m-value-locked = 锁定 { $n }
m-value-booked = 已约 { $n }
m-value-booked-at-most = 已约 ≤ { $n }
m-value-order = { $status ->
    [RESERVED] 由未付款订单占用
    [CONFIRMED] 属于已付款订单
   *[other] 属于状态为 { $status } 的订单
}
m-value-codes = { $n } 个券码
m-value-redis-equals-sql = Redis 与 SQL 一致
m-value-stock-shift = 可售/锁定/已售偏差 { $available }/{ $locked }/{ $sold }
m-value-slot-shift = 剩余名额偏差 { $delta }，状态：{ $status ->
    [OPEN] 开放
    [CLOSED] 停约
    [FROZEN] 冻结
   *[other] { $status }
}
m-value-pool-fix = 移除 { $stale } 个失效编号，补上 { $missing } 个缺失编号

## 代码以固定格式写入的操作日志详情（src/web/admin/audit.rs 读回后按读者的语言显示）
m-audit-schedule-applied = 新建 { $created } 个时段，删除 { $removed } 个，{ $changed } 个名额有变化，{ $kept } 个因有预约而保留，{ $edited } 个手动设置的名额保持不变
m-audit-schedule-rules = 门店 { $store }：{ $rules } 条排班规则
m-bad-rate = 速率须为每秒 { $min } 到 { $max } 次的整数（0 表示不限），留空则用默认值。
m-rate-limited = 此 API 密钥每秒请求超过 { $rate } 次，请 { $seconds } 秒后再试。
m-key-rate-set = “{ $name }”的速率已设为{ $rate }。
m-unknown-event-type = “{ $word }”不是事件类型（见文档中的列表；一类事件以 .* 结尾）。
m-webhook-bad-url = 请输入完整的 http:// 或 https:// 地址，最多 { $max } 个字符。
m-webhook-private-address = { $host } 不是公网地址：Webhook 不能发往本机或内网。
m-webhook-unresolvable = 找不到 { $host }（域名无法解析）。
m-webhook-events-required = 请至少选择一种事件类型（或用 * 表示全部）。
m-webhook-bad-overlap = 重叠时长须为 0 到 { $max } 之间的整数小时。
m-webhook-paused = Webhook { $url } 已暂停。事件会继续排队，恢复后发送。
m-webhook-resumed = Webhook { $url } 已恢复：暂停期间排队的事件正在发送。
m-webhook-deleted = Webhook { $url } 已删除，不会再向它发送任何事件。
m-webhook-redelivered = 事件 #{ $event } 将在几秒内重新发送。
m-webhook-exists = 已有发往该地址、订阅这些事件的 Webhook（#{ $id }）：它的密钥在添加时已显示过。如需新密钥，请在它的页面更换。
m-webhook-no-credentials = 地址中请不要带用户名和密码：请改为校验 Sellable-Signature 请求头。
m-override-in-past = 该日期已经过去：请选择今天或之后的日期。
m-too-many-overrides = 每个服务每个门店最多 { $max } 条特殊日期安排：请先删除旧的。
m-one-off-added = 已添加时段：{ $when }。
m-customer-reached = { $reference }：已标记为已联系。
m-customer-not-reached = { $reference }：已重新列入待联系。
m-closure-who-required = 请选择请假的员工，或选择“整店”以关闭所有时段。
m-override-closed-with-hours = 已勾选“当天不开放”，但填写了时间：如需使用这些时间，请选择“当天使用以下时间”，否则请清空时间。
m-choose-a-date = 请选择日期。
m-copy-to-nothing = 请先勾选要复制到的星期，再点击“复制”。
m-bad-auto-no-show = 请输入 1 到 { $max } 之间的整数分钟，或留空（仅手动标记未到店）。
m-bad-buffer = 每个时段后的间隔须为 0 到 { $max } 之间的整数分钟。
m-call-note-saved = { $reference }：备注已保存。
m-last-day-before-first = 最后一天不能早于第一天。
m-sheet-too-large = 文件超过 { $mb } MB，请拆分成较小的表格。
m-sheet-empty = 文件是空的。
m-sheet-too-many-lines = 文件超过 { $max } 行，请拆分成较小的表格。
m-sheet-missing-columns = 第一行必须是列名，缺少：{ $columns }。
m-sheet-no-header = 第一行必须是列名（sku、warehouse、qty）。
m-sheet-bad-line = 这一行无法按 CSV 读取（请检查引号）。
m-sheet-bad-characters = 这一行含有非文本字符（单元格内换行或控制字符）。
m-sheet-counted-twice = 重复盘点：第 { $first } 行已盘点该仓库的此 SKU。
m-sheet-no-good-lines = 此表格没有可以记录的行。
m-sheet-has-bad-lines = 有 { $n } 行无法记录：请修改后重新上传，或只应用有效的行。
m-sheet-line-refused = 未应用任何一行：第 { $line } 行在记录时被拒绝。{ $why }
m-sheet-already-applied = 此文件已经应用过（导入 #{ $id }），没有重复记录。
m-sheet-applied = 已应用 { $n } 行：库存和流水已更新。
m-sheet-lines-refused-late = 预览后库存有变化，以下行在记录时被拒绝，未应用：{ $lines }。
m-already-invited = { $email } 已有待接受的邀请：如需重新发送，请先撤销原邀请。
m-invitation-invalid = 此邀请链接已被使用、撤销或已过期，请重新索取。
m-password-mismatch = 两次输入的密码不一致。
m-cannot-deactivate-self = 不能停用自己的账号，请联系其他管理员。
m-wrong-password = 当前密码不正确。
m-invited = 已邀请 { $email }。请把下面的链接发给对方：链接只显示这一次。
m-invitation-revoked = 已撤销对 { $email } 的邀请，链接已失效。
m-person-deactivated = 已停用 { $who }，其所有登录已退出，历史记录保留。
m-person-reactivated = { $who } 可以重新登录了。
m-own-password-changed = 密码已修改，其他设备上的登录已退出。
m-own-name-saved = 姓名已保存。
m-welcome = 欢迎，{ $name }。
field-display_name = 姓名
field-confirm = 再次输入密码
field-current = 当前密码
field-new = 新密码
field-mode = 应用方式
field-file = 文件
m-bad-unit-cost = 单件成本须为不小于 0 的金额，最多两位小数，例如 12.50。
m-sheet-choose-file = 请选择要上传的 CSV 文件。
m-bad-priority = 优先级须为 -{ $max } 到 { $max } 之间的整数：下单时优先从优先级高的仓库扣减。
m-place-saved = 已保存“{ $name }”。
m-display-name-taken = “{ $name }”不可用：它是这里另一位人员的姓名或邮箱，或是记录中对系统、顾客或 API 密钥的称呼。请另选一个。
m-staff-archived-meanwhile = { $name } 刚刚已归档，不再接受新的安排：请选择其他人员，或在人员页面将其恢复。
m-staff-still-scheduled = { $name } 仍在每周排班中（{ $rules } 个时段），还有 { $slots } 个未开始的时段：请先从排班中移除，并关闭其未开始的时段（可用“请假/关闭”）。
m-staff-renamed = 已改名为 { $name }。
m-staff-archived = 已归档 { $name }：不再排新时段，历史记录全部保留。
m-staff-restored = { $name } 已恢复在岗。

# Staff book for a caller or a walk-in (issue 54).
m-staff-booked = 已为 { $name } 预约 { $when }，预约号 { $reference }。
m-staff-waitlisted = { $name } 已加入候补，排第 { $position } 位。有空位时会自动为其预约。
m-staff-book-pick-slot = 请选择要预约的时段。
m-staff-book-full = 已满
m-staff-book-left = 剩 { $n } 个名额

# Multi-visit passes and undone redemptions (issue 54).
m-vouchers-only-uses = 只有券码类商品可以设置多次使用。
m-uses-fixed = 此 SKU 的券码已按此次数售出，不能再修改。如需其他次数，请新建 SKU。
m-code-not-redeemed = 此券码尚未核销，无可撤销。
m-undo-window-passed = 核销后 { $minutes } 分钟内可以撤销；这次核销已超过时限。
m-bad-check-in = 请输入 0（开始后才能签到）到 { $max } 之间的分钟数。
m-staff-book-inside-notice = 该时段距开始已不足线上预约所需的 { $minutes } 分钟。如仍要为顾客预约，请勾选下方确认。
