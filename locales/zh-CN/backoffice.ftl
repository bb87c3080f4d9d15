# 后台页面：概览与排班（其余页面陆续移入）。
back = 返回
pager = 分页
pager-page-of = 第 { $page } / { $pages } 页
pager-prev = 上一页
pager-next = 下一页
pager-jump = 跳至
pager-go = 跳转
product-status = { $status ->
    [DRAFT] 草稿
    [ONLINE] 已上架
    [OFFLINE] 已下架
   *[other] { $status }
}

booking-status = { $status ->
    [BOOKED] 已预约
    [CANCELLED] 已取消
    [ATTENDED] 已到店
    [NO_SHOW] 爽约
   *[other] { $status }
}

dash-open-findings = 未处理的对账异常：{ $n } 个。
dash-settle-payments = 去处理
dash-frozen-by-findings = 对账发现 { $n } 处数据不一致，已冻结相关 SKU 或时段：在有人核查之前不再销售。
dash-review-findings = 查看异常
dash-products = 商品
dash-merchants = 商户
dash-not-sellable = 不可售
dash-low-stock = 库存不足
dash-open-findings-tile = 未处理的对账异常
dash-bookings-today = 今日预约
dash-today-fill = 今日名额已预约（{ $booked } / { $capacity }）
dash-today-no-slots = 今日没有开放的时段
dash-week-no-show = 本周爽约率
dash-week-mark = （标记到店情况后显示）
dash-no-products = 还没有商品。
dash-create-first = 创建第一个商品。
dash-stores = 门店
dash-no-stores = 还没有门店。添加门店：
dash-warehouses = 仓库
dash-no-warehouses = 还没有仓库。添加仓库：

sched-tab-week = 周视图
sched-tab-day = 日预约
sched-tab-hours = 营业时间
sched-tab-closures = 停约
sched-tab-staff = 员工
sched-tab-metrics = 数据
sched-choose-store = 选择门店
sched-show = 查看
sched-times-in = 时间均为{ $tz }
sched-prev-week = ← 上一周
sched-next-week = 下一周 →
sched-this-week = 本周
sched-week-of = { $week }
sched-service = 服务
sched-all-services = 全部服务
sched-everyone = 全部员工
sched-filter = 筛选
sched-no-slots = 本周没有时段。
sched-slots-come-from = 时段由服务的每周排班生成：
sched-create-service-first = 请先创建服务类商品，其每周排班会生成时段。
sched-no-slots-filtered = 本周没有符合筛选条件的时段。
sched-bookings-of = { $date } 的预约
sched-weekly-schedules = 每周排班：
fill-free = 空闲
fill-nearly-full = 将满
fill-full = 已满
fill-closed = 停约
blist-in-closed-slot = 时段已停约：待联系
blist-held = 候补名额已保留，顾客尚未接受
fill-past = 已开始或已过
sched-bookings = 预约
sched-prev-day = ← 前一天
sched-next-day = 后一天 →
sched-today = 今天
sched-day = 日期
sched-go = 前往
sched-no-bookings = 当天没有预约。
sched-time = 时间
sched-reference = 预约号
party-badge = { $n } 人
sched-cancel-booking = 取消预约…
sched-move-booking = 改期…
wait-title = 候补名单
wait-explain = 有名额释放时，系统会自动为排在最前且人数合适的候补顾客预约。请致电确认。
wait-since = 候补时间
wait-explain-hold = 有名额释放时，名额会为排在最前且人数合适的候补顾客保留，直到其在候补页面接受或放弃，或保留时间结束。请致电告知顾客。
wait-offered-until = 名额保留至 { $time }
wait-offer-lapsed = 保留名额已超时未接受
wait-status = { $status ->
    [WAITING] 候补中
    [OFFERED] 名额保留中
    [BOOKED] 已由候补转为预约
    [DECLINED] 已放弃名额
    [CANCELLED] 已退出候补
   *[EXPIRED] 已过期（时段已开始）
}
move-title = 为预约 { $reference } 改期
move-explain = 选择同一服务的其他时间或服务人员。系统先占新名额再释放原名额，顾客不会失去位置；预约号不变。请致电告知顾客。
move-none = 未来几周内此服务没有可容纳该预约的其他时间。
move-pick-day = 查看其他日期的时间
move-nearest = 最近的时间
move-none-that-day = 当天此服务没有可容纳该预约的时间。
move-here = 改到此时段
sched-attended = 到店
sched-no-show = 爽约
sched-n-bookings = { $n } 个预约
sched-no-store = 该商户还没有门店。时段、预约和停约都属于门店，请先创建门店：
sched-operator-choose-store = 请在上方选择一个商户的门店，查看其时段、预约和停约。
sched-choose-store-above = 请在上方选择门店。
sched-cancel-explain = 名额会立即释放给其他顾客。请告知顾客；此操作无法撤销（顾客可以重新预约）。
sched-cancel-explain-closed = 该时段已停约，名额不会重新开放预约。请告知顾客；此操作无法撤销（顾客可以预约其他时间）。
sched-reason-optional = 原因（选填）
sched-cancel-reason-example = 顾客来电：生病
sched-cancel-the-booking = 取消预约
sched-keep-it = 保留
sched-no-staff = 还没有员工。添加员工后，可在排班中为其安排时段，或为其登记请假。
sched-their-week = 查看其排班
sched-add-staff = 添加员工
sched-add = 添加

slot-status = { $status ->
    [OPEN] 开放
    [CLOSED] 停约
   *[other] { $status }
}
frozen-by-reconciliation = 已被对账冻结：
frozen-broken-identity = 发现数据不一致
frozen-review-finding = 查看异常 #{ $finding }
frozen-finding-for-review = 异常 #{ $finding }，待平台运营或商户管理员核查
slot-frozen-no-bookings = 解冻前，此时段不接受预约。
slot-booked-capacity = 已约 / 名额
slot-places-left = 剩余名额
slot-to-contact = 需要联系的预约
slot-to-contact-explain = 此时段已停约，但这些顾客仍有预约。请先致电通知，再在下方取消其预约，或重新开放时段。
slot-started-record = 时段已开始：请记录谁到店、谁爽约。
slot-not-started-explain = 时段开始前可以取消预约；开始前不久即可为到店顾客签到（见门店设置）；开始后才能记为爽约。
slot-no-bookings = 还没有人预约这个时段。
slot-booked-at = 预约时间
slot-places = 名额
slot-save-capacity = 保存名额
slot-close-this = 停约此时段
slot-close-confirm = 确定停约此时段吗？重新开放前无人能预约；已有的预约会列出，方便您致电通知。
slot-close-reason-example = 老师病假
slot-close = 停约
slot-reopen-title = 重新开放
slot-reopen = 重新开放时段
slot-reopen-explain = 顾客可以再次预约空余名额。

colon = {"："}
cl-one = 停约
cl-whole-store = 整店
cl-the-whole-store = 整店
cl-new-title = 为员工请假或整店停约
cl-new-explain = 该时间段内的所有时段会立即停约，随后列出需要致电通知的预约。
cl-who = 对象
cl-from = 开始
cl-until = 结束
cl-reason-staff = 原因（仅员工可见）
cl-reason-example = 年假
cl-public-note = 给顾客的说明（选填）
cl-public-note-example = 包场活动，暂停营业
cl-close = 停约
cl-all = 全部停约
cl-none = 还没有停约：所有时段按每周排班进行。
cl-period = 时间段
cl-state = 状态
cl-by = 操作人
cl-state-active = 停约中
cl-state-ended = 已结束
cl-state-reopened = 已于 { $at } 重新开放
cl-reopen-link = 重新开放…
cl-n = 共 { $n } 条停约
cl-slots-held = 停约的时段数
cl-created-by = 创建人
cl-nobody-to-call = 停约的时段中没有有效预约：无需致电。
cl-to-contact-explain = 这些顾客在停约的时段中有预约。请先致电通知，再取消其预约以释放名额，或重新开放。
cl-open-to-call = 在“待联系”列表中逐一处理
cl-slot = 时段
cl-bulk-confirm = 确定取消所列的 { $n } 个预约吗？名额将释放；顾客的预约号会保留备查。
cl-customer-reason = 告知顾客的原因
cl-customer-reason-example = 老师请假
cl-cancel-these = 取消这些预约…
cl-reopen-confirm = 确定重新开放这些时段吗？顾客可以再次预约空余名额。
cl-reopen-explain = 立即结束停约：除非另有停约覆盖，其时段将重新开放。
cl-closed-slots = 停约的时段
cl-was-reopened = 停约已重新开放：其时段已恢复开放。
cl-no-slot-in-period = 该时间段内没有时段。
cl-showing-first = 显示前 { $shown } 个，共 { $total } 个时段。
cl-cancel-bookings-title = 取消预约
cl-back = 返回停约详情
cl-cancel-n-question = 确定取消 { $n } 个预约吗？
cl-none-left = 此停约的时段中已没有有效预约。
cl-cancel-explain = 名额会立即释放。请确认已通知顾客。
cl-cancel-the-bookings = 取消预约
cl-keep-them = 保留
cl-reopen-store-question = 确定整店重新开放吗？
cl-reopen-who-question = 确定为 { $who } 重新开放吗？
cl-already-reopened = 此停约已于 { $at } 重新开放。
cl-reopen-now-explain = 停约立即结束。除非另有停约覆盖，其时段将重新开放，顾客可以预约空余名额。
cl-keep-closed = 保持停约

verdict-sellable = 可售
verdict-not-sellable = 不可售
verdict-next-slots = 接下来的可约时段：
verdict-n-of-m-left = 剩 { $n } / { $m }
met-title = 到店率、爽约率与空置率
met-weeks-from-monday = 按周一起算，{ $tz }
met-weeks = 周数
met-explain = 只看比率，不看总数：周一的名额不等于周二的名额。到店率和爽约率统计时段开始后已标记预约的名额数（三人同行计三个名额）；空置率是已过去的开放时段中无人预约的名额占比。
met-no-services = 还没有服务：请创建服务类商品并设置每周排班。
met-no-match = 没有与此编码匹配的服务。
met-chart-label = { $code } 每周的到店率、爽约率与空置率
met-show-rate = 到店率
met-no-show-rate = 爽约率
met-vacancy-rate = 空置率
met-week-of = 周
met-past-slots = 已过去的开放时段
met-marked = 已标记
met-not-marked = 未标记
met-show-rate-h = 到店率
met-no-show-rate-h = 爽约率
met-vacancy-rate-h = 空置率
met-mark-to-see = 标记到店情况后才会显示到店率和爽约率：在日预约列表中，将已开始时段的每个预约标记为“到店”或“爽约”。商户管理员也可在门店页面设置自动标记未到店。
met-open-day-list = 打开日预约列表
met-x-axis = 周（从周一起）

# 门店预约页设置。
store-title = 预约页
stock-reason-code-label = 原因
stock-reason-choose = 请选择…
stock-note = 备注
stock-reason-code = { $code ->
    [received] 供应商到货
    [return_restock] 退货重新上架
    [correction] 更正此前的错误
    [count] 盘点
    [damaged] 损坏
    [theft_loss] 失窃或丢失
    [promotion_donation] 促销或捐赠
    [qc_hold] 质检冻结
   *[other] 其他（请在备注中说明）
}
# A reason as records show it (the form's wording asks for a note).
stock-reason-name = { $code ->
    [received] 供应商到货
    [return_restock] 退货重新上架
    [correction] 更正此前的错误
    [count] 盘点
    [damaged] 损坏
    [theft_loss] 失窃或丢失
    [promotion_donation] 促销或捐赠
    [qc_hold] 质检冻结
   *[other] 其他
}
stock-reason-category = { $category ->
    [inbound] 入库
    [outbound] 出库
    [adjustment] 更正与盘点
    [hold] 冻结
   *[other] 其他
}
store-explain = 顾客在门店预约页和预约确认中看到的门店信息。留空则不显示。
store-open-public = 打开预约页
store-address-example = 上海市黄浦区南京东路1号
store-phone-example = 021 6288 1234
store-description-example = 外滩旁的安静茶室，课程提供中文和英文。
store-country = 电话号码所属国家或地区
store-country-explain = 两个字母（CN、HK、SG…）：顾客不带国家代码的号码按此国家或地区解读。留空：按门店时区（{ $tz }）所在的国家或地区。时区为建店时所选，门店的时段与排班都按它保存。
store-language = 预约页语言
store-language-explain = 浏览器要求中文或英文的顾客看到对应语言，其他顾客看到此处所选语言。
store-phone = 电话
store-save = 保存

# 商品表单。
prod-description-hint = （在预约页向顾客展示）
dash-gate-off = Redis 闸门自 { $since } 起已关闭。
dash-gate-off-explain = 订单和预约目前只由数据库处理：高峰时会慢一些，但数量依然准确。Redis 恢复后会自动重新开启。
dash-imports-failed = 过去 24 小时内有 { $n } 次券码导入失败。
dash-imports-open = 查看券码批次

# 停约表单（issue 19）：需明确选择对象；按整天或按时间请假。
cl-choose-who = 请选择…
cl-span-days = 整天
cl-span-times = 按时间
cl-from-date = 第一天
cl-until-date = 最后一天（含）
cl-affected = 涉及预约
cl-to-call = 待联系

# Automatic no-shows (issue 19).
store-auto-no-show = 自动标记未到店（分钟后）
store-auto-no-show-off = 关闭
store-auto-no-show-explain = 设置后，时段结束超过该分钟数、且无人标记到店或未到店的预约，将自动标记为未到店。日预约列表和数据页会注明哪些是自动标记的。留空即关闭。
store-bookings-title = 预约规则
store-waitlist-hold = 为候补顾客保留释放的名额（分钟）
store-waitlist-hold-off = 自动预约
store-waitlist-hold-explain = 留空：有名额释放时，自动为排在最前且人数合适的候补顾客预约。填写后：名额为该顾客保留这么多分钟（不超过开始时间），顾客在候补页面接受或放弃；超时未回复则顺延给下一位。
met-auto-marked = （其中 { $n } 个自动标记）
met-nothing = 近 { $weeks } 周内该服务没有已进行的时段。
actor-apikey = API 密钥“{ $name }”
actor-person-same-name = { $name }（{ $email }）
actor-customer = 顾客
actor-migration = 冻结记录功能上线前
actor-system = { $part ->
    [demo] 演示数据
    [expiry] 超时自动释放
    [reconcile] 对账
    [webhooks] Webhook 推送
    [cli] 命令行
    [waitlist] 候补自动预约
    [auto-no-show] 自动标记未到店
   *[other] 系统（{ $part }）
}

## 人员与登录

people-link = 邀请链接
people-link-once = 请立即复制此链接发给对方（微信、邮件等）：链接只显示这一次，只能使用一次，7 天内有效。
people-you = 我
people-role = { $role ->
    [merchant_admin] 商户管理员
    [store_staff] 门店员工
   *[operator] 运营
}
people-active = 在用
people-deactivated = 已停用
people-reset = 重置密码…
people-deactivate = 停用…
people-reactivate = 重新启用
people-invite = 邀请新成员
people-invite-explain = 对方会收到一个设置密码的链接，登录后只拥有这里给定的角色和门店。
people-name-example = 李娜
people-role-explain = 门店员工管理所在门店的排班和预约，可查看库存；商户管理员可以修改商户的一切。
people-store-for-staff = 门店（仅门店员工）
people-send-invite = 生成邀请链接
people-waiting = 待接受的邀请
people-none-waiting = 没有待接受的邀请。
people-invited-by = 邀请人
people-expires = 链接有效期至
people-revoke = 撤销
people-action-title = { $action ->
    [reset] 重置密码
   *[deactivate] 停用成员
}
people-action-explain = { $action ->
    [reset] 系统会生成新密码并只显示一次，请转交对方。原密码立即失效，对方所有登录都会退出。
   *[deactivate] 对方的所有登录立即退出，且无法再登录。其操作记录全部保留，之后可以重新启用。
}
people-action-confirm = { $action ->
    [reset] 生成新密码
   *[deactivate] 停用
}
people-password-once = 对方的新密码，只显示这一次。请转交对方；对方可在“我的账号”中修改。
people-back = 返回人员列表
people-cancel = 取消
account-title = 我的账号
account-name-label = 您的操作旁显示的姓名
account-password = 密码
account-password-explain = 至少 10 个字符。修改后，其他设备上的登录会退出。
account-change-password = 修改密码
invite-title = 加入管理后台
invite-for = { $merchant } 邀请您成为{ $role }。
invite-accept = 设置密码并登录
invite-invalid = 此邀请链接已被使用、撤销或已过期，请联系邀请人重新发送。

## 门店与仓库

places-explain = 门店是顾客预约服务的地方；仓库存放实物商品。简称（slug）出现在链接和 API 中，创建后不能修改。
places-stores = 门店
places-no-stores = 还没有门店。
places-store-settings = 预约页设置
places-add-store = 添加门店
places-store-example = 浦东店
places-slug-hint = 小写字母、数字和连字符，例如 pudong-1。用于链接和 API。
places-warehouses = 仓库
places-priority-explain = 下单时优先从优先级最高的仓库扣减库存。
places-no-warehouses = 还没有仓库：添加仓库后才能入库。
places-add-warehouse = 添加仓库
places-warehouse-example = 东区仓
staff-rename = 改名
staff-archive = 归档
staff-restore = 恢复在岗
staff-archived = 已归档
staff-archive-explain = 归档的员工保留全部历史记录，不再排新时段。请先把其从每周排班中移除，并关闭其未开始的时段。

# Undone redemptions and multi-visit passes at the counter (issue 54).
counter-undone-now = 已撤销核销：此券码可再次使用。
counter-uses-left = 剩余次数
counter-uses-of = { $left } / { $uses } 次
counter-undo = 撤销此次核销
counter-undo-example = 例如：扫错了顾客的券码
counter-undo-confirm = 撤销核销
counter-undo-explain = 券码恢复为已售、可再次使用；历史记录会保留这次核销及撤销原因。
store-check-in = 提前签到（开始前多少分钟）
store-check-in-explain = 店员可以在开始前这么多分钟起，为到店的顾客标记“已到店”。0：开始后才能签到。“未到店”总在开始之后。
